//! Function deletion: a function nothing kept refers to is dropped whole
//! (`Module::retain_functions` refuses while a call names it).

use xir::{FuncId, Module};

use crate::Run;

pub(crate) fn delete_functions(m: &mut Module, run: &mut Run) -> bool {
    let mut changed = false;
    let mut k = 0;
    while let Some(victim) = m.func_ids().nth(k) {
        if run.spent() {
            break;
        }
        if run.attempt(m, |c| c.retain_functions(|id: FuncId, _| id != victim)) {
            changed = true;
        } else {
            k += 1;
        }
    }
    changed
}
