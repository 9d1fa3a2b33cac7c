//! What the generated `Rule` enum needs beyond its tables: printing by name,
//! comparison with spellings (tests and older callers write `d.rule ==
//! "ssa-dominance"`), and conversion from a spelling for callers that still
//! compose names at run time (`format!("dialect:{d}:{inv}")`), which must
//! name a declared rule.

use std::fmt;

use crate::Rule;

impl Rule {
    /// The rule a run-time spelling names. A spelling no list declares is a
    /// bug in the caller: debug builds panic (tests catch it), release builds
    /// report it as [`Rule::Internal`] rather than lose the diagnostic.
    pub fn named(s: &str) -> Rule {
        match Rule::from_name(s) {
            Some(r) => r,
            None => {
                debug_assert!(false, "diagnostic rule `{s}` is not declared: add it to ir-spec/spec/rules.ron");
                Rule::Internal
            }
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl From<&str> for Rule {
    fn from(s: &str) -> Rule {
        Rule::named(s)
    }
}

impl From<&String> for Rule {
    fn from(s: &String) -> Rule {
        Rule::named(s)
    }
}

impl From<String> for Rule {
    fn from(s: String) -> Rule {
        Rule::named(&s)
    }
}

impl PartialEq<str> for Rule {
    fn eq(&self, other: &str) -> bool {
        self.name() == other
    }
}

impl PartialEq<&str> for Rule {
    fn eq(&self, other: &&str) -> bool {
        self.name() == *other
    }
}

impl PartialEq<String> for Rule {
    fn eq(&self, other: &String) -> bool {
        self.name() == other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for &r in Rule::ALL {
            assert!(seen.insert(r.name()), "duplicate {r}");
            assert_eq!(Rule::from_name(r.name()), Some(r));
            assert!(!r.doc().is_empty());
        }
        assert_eq!(Rule::SsaDominance.name(), "ssa-dominance");
        assert_eq!(Rule::from_name("dialect:xir.raw:opcode"), Some(Rule::DialectXirRawOpcode));
        assert_eq!(Rule::from_name("no-such-rule"), None);
        assert!(Rule::SsaDominance == "ssa-dominance");
    }
}
