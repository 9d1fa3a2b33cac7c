//! A block given member by member. The front end holds a storage struct
//! with members beside its runtime array (`struct Matrix { size: vec2f,
//! numbers: array<f32> }`) as one XIR buffer per member, keyed
//! `NAME.member` (`frontend/src/lower.rs`, `GlobalKind::Members`): a member
//! that is not an array is a one-element buffer. So that naga's module of
//! the same shader runs on the same inputs and its outputs compare key by
//! key, the runner takes a block of several members under those keys too,
//! joins them into the block's `[member, ...]` value, and splits the
//! block's output back the same way.

use std::borrow::Cow;

use serde_json::Value as Json;
use xir::interp::{Inputs, Outputs};
use xir_spirv::reflect::{DataType, Reflection, StructLayout, VariableKind};

use super::RunError;

/// A block whose input came member by member: its key and each member's
/// key, with whether the member is an array (given as is) or a value
/// (given as a one-element list).
pub(crate) struct Joined {
    key: String,
    members: Vec<(String, bool)>,
}

/// The member keys of a block of several members, an unnamed member by its
/// index as the front end names it (`None` for any other variable: it is
/// only ever given whole).
fn member_keys(key: &str, kind: &VariableKind) -> Option<Vec<(String, bool)>> {
    let (VariableKind::StorageBuffer(StructLayout { members, .. })
    | VariableKind::UniformBuffer(StructLayout { members, .. })) = kind
    else {
        return None;
    };
    if members.len() < 2 {
        return None;
    }
    let keys = members.iter().enumerate().map(|(k, m)| {
        let name = m.name.clone().unwrap_or_else(|| k.to_string());
        (format!("{key}.{name}"), matches!(m.ty, DataType::Array { .. }))
    });
    Some(keys.collect())
}

/// `inputs` with every block that is given member by member (no key of its
/// own, some `NAME.member` key) joined into its `[member, ...]` value, and
/// the blocks so joined. Borrowed when there is none.
pub(crate) fn join<'i>(r: &Reflection, inputs: &'i Inputs) -> Result<(Cow<'i, Inputs>, Vec<Joined>), RunError> {
    let mut joined = Vec::new();
    let mut out = Cow::Borrowed(inputs);
    for v in r.variables.iter().chain(&r.unused) {
        let Some(members) = member_keys(&v.name, &v.kind) else { continue };
        if inputs.args.contains_key(&v.name) || !members.iter().any(|(k, _)| inputs.args.contains_key(k)) {
            continue;
        }
        let args = &mut out.to_mut().args;
        let mut value = Vec::with_capacity(members.len());
        for (key, is_array) in &members {
            let Some(given) = args.remove(key) else {
                return Err(RunError::Abi(format!(
                    "no input for `{key}`: `{}` is given member by member, and every member must be",
                    v.name
                )));
            };
            value.push(if *is_array { given } else { single_element(key, given)? });
        }
        args.insert(v.name.clone(), Json::Array(value));
        joined.push(Joined { key: v.name.clone(), members });
    }
    Ok((out, joined))
}

/// The value of a one-element buffer's input (`[v]` or `{"fill": v,
/// "len": 1}`), as the front end holds a value that is not an array: a
/// struct's member, or a whole storage variable (`var<storage> n:
/// atomic<u32>`, which naga wraps in a block of one member).
pub(crate) fn single_element(key: &str, given: Json) -> Result<Json, RunError> {
    match given {
        Json::Array(mut v) if v.len() == 1 => Ok(v.remove(0)),
        Json::Object(mut o)
            if o.len() == 2 && o.get("len").and_then(Json::as_u64) == Some(1) && o.contains_key("fill") =>
        {
            Ok(o.remove("fill").expect("checked"))
        }
        other => {
            let found = match &other {
                Json::Array(v) => format!("a list of {}", v.len()),
                Json::Object(o) => match o.get("len") {
                    Some(n) if o.contains_key("fill") => format!("a fill of length {n}"),
                    _ => "an object".to_string(),
                },
                v => v.to_string(),
            };
            Err(RunError::Abi(format!(
                "`{key}`: a value that is not an array takes a one-element list, `[v]` or `{{\"fill\": v, \"len\": \
                 1}}` (the front end holds it as a one-element buffer), not {found}"
            )))
        }
    }
}

/// Each joined block's output split back into its members' keys.
pub(crate) fn split(outputs: &mut Outputs, joined: &[Joined]) -> Result<(), RunError> {
    for j in joined {
        let Some(Json::Array(values)) = outputs.buffers.remove(&j.key) else {
            return Err(RunError::Abi(format!("`{}` came back as something other than its members", j.key)));
        };
        for ((key, is_array), value) in j.members.iter().zip(values) {
            let value = if *is_array { value } else { Json::Array(vec![value]) };
            outputs.buffers.insert(key.clone(), value);
        }
    }
    Ok(())
}
