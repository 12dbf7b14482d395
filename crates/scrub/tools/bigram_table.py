#!/usr/bin/env python3
"""Prints the letter-bigram table of crates/scrub/src/tokens/bigrams.rs.

Each entry is how much likelier a letter follows another in English words than in random
letters: log2(P(b | a) / (1/26)), in tenths of a bit, from the distinct lower-cased words of
a word list (Debian's wamerican: /usr/share/dict/words), with add-half smoothing so that no
pair is impossible. Run it and paste its output over the table to regenerate it.
"""
import collections
import math
import string
import sys

path = sys.argv[1] if len(sys.argv) > 1 else "/usr/share/dict/words"
words = set()
with open(path, encoding="utf-8") as f:
    for line in f:
        w = line.strip()
        if w.isascii() and w.isalpha():
            words.add(w.lower())
pairs = collections.Counter()
for w in words:
    for a, b in zip(w, w[1:]):
        pairs[a, b] += 1
letters = string.ascii_lowercase
print("pub(super) const LOG_ODDS: [[i8; 26]; 26] = [")
for a in letters:
    row = sum(pairs[a, b] for b in letters)
    cells = []
    for b in letters:
        p = (pairs[a, b] + 0.5) / (row + 13)
        cells.append(str(max(-127, min(127, round(10 * (math.log2(p) + math.log2(26)))))))
    print(f"    // {a}")
    print("    [" + ", ".join(cells) + "],")
print("];")
