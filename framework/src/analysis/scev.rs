//! Scalar evolution: closed forms of loop induction values (add recurrences).
