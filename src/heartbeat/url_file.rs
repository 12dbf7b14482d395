//! The file that keeps a heartbeat's ping URL, through `files` like every file crontap-run
//! writes: its directory opened by handle with every parent checked (made 0700 when
//! missing), no symbolic link followed, the URL written to a new exclusive file of an
//! unguessable name and renamed into place, mode 0600. Its errors name the file, never
//! what it holds.

use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow};

use crate::files::{self, Check, Dir};
use crate::report::heartbeat::HeartbeatUrl;
use crate::sanitize;

/// A URL file: its directory and its name there.
pub struct UrlFile {
    dir: PathBuf,
    name: String,
}

impl UrlFile {
    /// The file at `path`, which must name a file (not end in `/`, `.` or `..`).
    pub fn new(path: &Path) -> Result<UrlFile> {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .filter(|_| !path.as_os_str().to_string_lossy().ends_with('/'))
            .ok_or_else(|| anyhow!("--url-file {} must name a file", sanitize::path(path)))?;
        let dir = match path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir.to_owned(),
            _ => PathBuf::from("."),
        };
        Ok(UrlFile {
            dir,
            name: name.to_owned(),
        })
    }

    /// The path, for messages.
    pub fn shown(&self) -> String {
        sanitize::path(&self.dir.join(&self.name))
    }

    /// The URL the file holds; `None` when there is no file (or no directory yet). A link,
    /// or anything but a plain file, is refused.
    pub fn read(&self) -> Result<Option<HeartbeatUrl>> {
        let Some(dir) = Dir::open(&self.dir, Check::Private, false)? else {
            return Ok(None);
        };
        let Some(bytes) = dir.read(&self.name)? else {
            return Ok(None);
        };
        let source = format!("the URL file {}", self.shown());
        let text = String::from_utf8(bytes).map_err(|_| {
            anyhow!("{source} is not UTF-8 text; remove it to create the heartbeat")
        })?;
        HeartbeatUrl::parse(text.trim(), &source).map(Some)
    }

    /// Writes `url` to the file, replacing what it held.
    pub fn write(&self, url: &HeartbeatUrl) -> Result<()> {
        let dir = Dir::open(&self.dir, Check::Private, true)?
            .ok_or_else(|| anyhow!("cannot create {}", sanitize::path(&self.dir)))?;
        dir.replace(
            &self.name,
            format!("{}\n", url.success().as_str()).as_bytes(),
            files::PRIVATE,
            true,
        )
    }
}
