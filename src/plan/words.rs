//! A shell command line read as `sh` splits it, as far as `plan --crontab` needs: the words
//! of each simple command with their quotes taken off, whether each is plain text (no
//! expansion, glob or `~` left for the shell), and where one command ends and the next
//! begins. Used to find the program a shell line runs (its job name comes from it) and the
//! arguments a line that runs crontap-run already gives it (the name that run derives).
//! It reads; it never decides what a line means to the shell: a line that needs the shell
//! still goes to it whole.

/// One word, as the shell would pass it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// The text with quotes and backslashes taken off.
    pub text: String,
    /// Nothing in it is left for the shell to expand (`$`, `` ` ``, a glob, a leading `~`).
    pub plain: bool,
}

/// A command line cut into simple commands (at `;`, `&`, `|`, `(`, `)`, line feeds), each
/// the words it runs with its redirections left out (`2>&1`, `> log`, `<in`).
pub fn commands(line: &str) -> Vec<Vec<Word>> {
    let mut reader = Reader {
        chars: line.chars().peekable(),
        commands: vec![Vec::new()],
        word: None,
        redirect_target: false,
    };
    reader.read();
    reader.commands.retain(|c| !c.is_empty());
    reader.commands
}

struct Reader<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
    commands: Vec<Vec<Word>>,
    word: Option<Word>,
    /// The next word is a redirection's target, not an argument.
    redirect_target: bool,
}

impl Reader<'_> {
    fn read(&mut self) {
        while let Some(c) = self.chars.next() {
            match c {
                ' ' | '\t' => self.end_word(),
                '\n' | ';' | '&' | '|' | '(' | ')' => {
                    self.end_word();
                    self.commands.push(Vec::new());
                }
                '<' | '>' => self.redirect(),
                '#' if self.word.is_none() => {
                    // A comment, to the end of the line.
                    for c in self.chars.by_ref() {
                        if c == '\n' {
                            self.commands.push(Vec::new());
                            break;
                        }
                    }
                }
                '\'' => {
                    let word = self.word.get_or_insert_with(Word::empty);
                    for c in self.chars.by_ref() {
                        if c == '\'' {
                            break;
                        }
                        word.text.push(c);
                    }
                }
                '"' => self.double_quoted(),
                '\\' => {
                    let next = self.chars.next();
                    let word = self.word.get_or_insert_with(Word::empty);
                    // A backslash and line feed join the lines.
                    if let Some(next) = next.filter(|&n| n != '\n') {
                        word.text.push(next);
                    }
                }
                c => {
                    let starts = self.word.is_none();
                    let word = self.word.get_or_insert_with(Word::empty);
                    if "$`*?[".contains(c) || (starts && c == '~') {
                        word.plain = false;
                    }
                    word.text.push(c);
                }
            }
        }
        self.end_word();
    }

    /// Inside double quotes: a backslash escapes only `$`, `` ` ``, `"`, `\` and a line feed.
    fn double_quoted(&mut self) {
        let word = self.word.get_or_insert_with(Word::empty);
        while let Some(c) = self.chars.next() {
            match c {
                '"' => return,
                '\\' => match self.chars.next() {
                    Some(n @ ('$' | '`' | '"' | '\\')) => word.text.push(n),
                    Some('\n') => {}
                    Some(n) => {
                        word.text.push('\\');
                        word.text.push(n);
                    }
                    None => word.text.push('\\'),
                },
                '$' | '`' => {
                    word.plain = false;
                    word.text.push(c);
                }
                c => word.text.push(c),
            }
        }
    }

    /// `<`, `>`, `>>`, `>&`, `<&`, `>|`, `<>`, `<<`: a number just before it is the
    /// descriptor, the next word the target; neither is an argument.
    fn redirect(&mut self) {
        if let Some(word) = &self.word
            && word.plain
            && !word.text.is_empty()
            && word.text.bytes().all(|b| b.is_ascii_digit())
        {
            self.word = None;
        }
        self.end_word();
        while self.chars.next_if(|c| "<>&|-".contains(*c)).is_some() {}
        self.redirect_target = true;
    }

    fn end_word(&mut self) {
        if let Some(word) = self.word.take() {
            match std::mem::take(&mut self.redirect_target) {
                true => {}
                false => self.commands.last_mut().expect("one at least").push(word),
            }
        }
    }
}

impl Word {
    fn empty() -> Word {
        Word {
            text: String::new(),
            plain: true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(line: &str) -> Vec<Vec<String>> {
        commands(line)
            .into_iter()
            .map(|c| c.into_iter().map(|w| w.text).collect())
            .collect()
    }

    #[test]
    fn simple_commands_and_their_words() {
        assert_eq!(
            texts("cd /app && ./sync.sh --all"),
            [vec!["cd", "/app"], vec!["./sync.sh", "--all"]]
        );
        assert_eq!(
            texts("a 'b c' \"d \\$e\" f\\ g; h|i"),
            [vec!["a", "b c", "d $e", "f g"], vec!["h"], vec!["i"]]
        );
        assert_eq!(
            texts("run 2>&1 >>log <in x # comment ; y\nz"),
            [vec!["run", "x"], vec!["z"]]
        );
        assert_eq!(texts("(sub) & bg"), [vec!["sub"], vec!["bg"]]);
        assert_eq!(texts(""), Vec::<Vec<String>>::new());
    }

    #[test]
    fn what_the_shell_expands_is_not_plain() {
        for (line, plain) in [
            ("a", true),
            ("'$a'", true),
            ("\\$a", true),
            ("$a", false),
            ("\"$a\"", false),
            ("`a`", false),
            ("a*", false),
            ("~/a", false),
            ("a~", true),
            ("[a]", false),
        ] {
            assert_eq!(commands(line)[0][0].plain, plain, "{line}");
        }
    }
}
