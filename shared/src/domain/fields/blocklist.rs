//! The bundled blocklist of common and breached passwords
//! (docs/API.md, Passwords and staff sign-in; its source, licence and
//! size: shared/data/README.md). The sorted file is linked into the binary
//! as it is and searched in place: a cold start parses and allocates
//! nothing for it, and a lookup reads about 17 lines.

use unicode_normalization::UnicodeNormalization as _;

/// One password per line, NFKC and lower-cased, sorted by byte.
static LIST: &[u8] = include_bytes!("../../../data/common-passwords.txt");

/// Whether `password` (as typed or normalized) is on the list, ignoring case.
pub fn is_common(password: &str) -> bool {
    let folded: String = password.nfkc().flat_map(char::to_lowercase).collect();
    contains(LIST, folded.as_bytes())
}

/// How many passwords the list holds.
pub fn len() -> usize {
    LIST.iter().filter(|&&b| b == b'\n').count()
}

/// Binary search over the lines of `list` (sorted, each ending in `\n`):
/// a probe at a byte offset reads the line that offset falls in.
fn contains(list: &[u8], wanted: &[u8]) -> bool {
    let (mut low, mut high) = (0, list.len());
    while low < high {
        let mid = low + (high - low) / 2;
        let start = list[..mid].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let end = start
            + list[start..]
                .iter()
                .position(|&b| b == b'\n')
                .unwrap_or(list.len() - start);
        match list[start..end].cmp(wanted) {
            std::cmp::Ordering::Equal => return true,
            std::cmp::Ordering::Less => low = end + 1,
            std::cmp::Ordering::Greater => high = start,
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_is_sorted_and_holds_at_least_a_hundred_thousand_passwords() {
        let lines: Vec<&[u8]> = LIST.split(|&b| b == b'\n').filter(|l| !l.is_empty()).collect();
        assert!(lines.len() >= 100_000, "{} passwords", lines.len());
        assert_eq!(lines.len(), len());
        assert!(lines.windows(2).all(|w| w[0] < w[1]), "sorted by byte, each once");
        assert!(
            lines
                .iter()
                .all(|l| std::str::from_utf8(l).unwrap().chars().count() >= 8)
        );
    }

    #[test]
    fn every_listed_password_is_found_and_others_are_not() {
        for line in LIST.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            assert!(contains(LIST, line), "{}", String::from_utf8_lossy(line));
        }
        for common in [
            "password123",
            "qwerty123",
            "12345678",
            "Password123",
            "ＱＷＥＲＴＹ123",
            "iloveyou1",
        ] {
            assert!(is_common(common), "{common}");
        }
        for rare in [
            "correct horse battery staple",
            "",
            "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz",
            "!",
            "한국어비밀번호입니다",
        ] {
            assert!(!is_common(rare), "{rare}");
        }
        let tiny = b"b\nd\nf\n";
        for (word, found) in [
            ("a", false),
            ("b", true),
            ("c", false),
            ("d", true),
            ("e", false),
            ("f", true),
            ("g", false),
        ] {
            assert_eq!(contains(tiny, word.as_bytes()), found, "{word}");
        }
        assert!(!contains(b"", b"a"));
    }
}
