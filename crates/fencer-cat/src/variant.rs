//! herd's variant names (`herd/variant.ml`): `if "name"` asks whether the variant is on.
//!
//! herd parses both the `-variant` tags and the names a model tests into one type, case
//! insensitively and through aliases (`kvm` is `vmsa`, `mte` is `memtag`), and a name it
//! cannot parse is a warning and "unset". Both sides go through [`canonical`] here.

/// The canonical (lowercase) name of a variant herd knows, or `None`.
pub(crate) fn canonical(s: &str) -> Option<String> {
    let l = s.to_ascii_lowercase();
    let c = match l.as_str() {
        "success" => "success",
        "instr" => "instr",
        "specialx0" | "amox0" | "x0" => "specialx0",
        "normw" => "normw",
        "acqrelasfence" => "acqrelasfence",
        "backcompat" | "back" => "backcompat",
        "fullscdepend" | "scdepend" => "fullscdepend",
        "splittedrmw" => "splittedrmw",
        "switchdepscwrite" => "switchdepscwrite",
        "switchdepscresult" => "switchdepscresult",
        "lrscdiffok" => "lrscdiffok",
        "mixed" => "mixed",
        "unaligned" => "unaligned",
        "dontcheckmixed" => "dontcheckmixed",
        "notweakpredicated" | "notweakpred" => "notweakpredicated",
        "lkmmv1" => "lkmmv1",
        "lkmmv2" => "lkmmv2",
        "tagmem" | "memtag" | "mte" => "memtag",
        "store-only" => "store-only",
        "cutoff" => "cutoff",
        "morello" => "morello",
        "neon" => "neon",
        "sve" => "sve",
        "sme" => "sme",
        "deps" => "deps",
        "instances" | "instance" => "instances",
        "kvm" | "vmsa" => "vmsa",
        "ets" => "ets",
        "ets2" => "ets2",
        "ets3" => "ets3",
        "exs" => "exs",
        "eis" => "eis",
        "eos" => "eos",
        "noptebranch" | "nobranch" => "noptebranch",
        "pte2" | "pte-squared" => "pte-squared",
        "optrfrmw" => "optrfrmw",
        "constrainedunpredictable" | "cu" => "constrainedunpredictable",
        "exp" => "exp",
        "ifetch" | "self" => "ifetch",
        // herd's own parser rejects these two; its cat interpreter accepts them.
        "dic" => "dic",
        "idc" => "idc",
        "shadowstack" => "shadowstack",
        "cos-opt" => "cos-opt",
        "test" => "test",
        "asl" => "asl",
        "asl_aarch64" | "aslaarch64" | "asl+aarch64" => "asl+aarch64",
        "aslv0" | "asl0" | "asl_0" => "aslv0",
        "aslv1" | "asl1" | "asl_1" => "aslv1",
        "asltype+warn" => "asltype+warn",
        "asltype+silence" => "asltype+silence",
        "asltype+check" => "asltype+check",
        "asl+aarch64+udf" => "asl+aarch64+udf",
        "s128" => "s128",
        "strict" => "strict",
        "warn" => "warn",
        "telechat" => "telechat",
        "nv2" => "nv2",
        "oldsolver" => "oldsolver",
        "oota" => "oota",
        "pauth1" => "pauth1",
        "pauth2" => "pauth2",
        "no-key-da" => "no-key-da",
        "no-key-db" => "no-key-db",
        "no-key-ia" => "no-key-ia",
        "no-key-ib" => "no-key-ib",
        "const-pac-field" => "const-pac-field",
        "fpac" => "fpac",
        "d128" => "d128",
        _ => {
            let b = l.as_bytes();
            if b.len() == 3 && b[0] == b't' && b[1].is_ascii_digit() && b[2].is_ascii_digit() {
                return Some(l);
            }
            // `sve:256` sets the vector length and turns `sve` on; likewise `sme:N`.
            for p in ["sve", "sme"] {
                if let Some(n) = l.strip_prefix(p).and_then(|r| r.strip_prefix(':')) {
                    if n.parse::<u32>().is_ok() {
                        return Some(p.to_string());
                    }
                }
            }
            return None;
        }
    };
    Some(c.to_string())
}

/// The canonical names of the variants a caller turned on; names herd does not know stand
/// for themselves, so a model may still test them.
pub(crate) fn enabled<'a, I: IntoIterator<Item = &'a String>>(names: I) -> Vec<String> {
    let mut v: Vec<String> = names
        .into_iter()
        .flat_map(|s| s.split(','))
        .map(|s| canonical(s.trim()).unwrap_or_else(|| s.trim().to_ascii_lowercase()))
        .collect();
    v.sort();
    v.dedup();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases() {
        assert_eq!(canonical("DIC").as_deref(), Some("dic"));
        assert_eq!(canonical("kvm").as_deref(), Some("vmsa"));
        assert_eq!(canonical("ETS2").as_deref(), Some("ets2"));
        assert_eq!(canonical("sve:256").as_deref(), Some("sve"));
        assert_eq!(canonical("no-such-variant"), None);
        let on = enabled(&["mte,Cos-Opt".to_string()]);
        assert_eq!(on, vec!["cos-opt".to_string(), "memtag".to_string()]);
    }
}
