//! The search's parameters set by name, for tuners (`tools/spsa.py`): UCI
//! `setoption name tune.<param> value <v>` sets one [`Params`] field for the searches that
//! follow. The names are the fields' names; `uci` does not list them (they are not for
//! players), and [`TUNABLES`] gives each one's range.

use crate::options::OptionError;
use crate::params::Params;

/// A parameter a tuner may set, with the values it accepts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tunable {
    pub name: &'static str,
    pub min: f64,
    pub max: f64,
    /// Whole numbers only (an `i32` field); otherwise any number in the range.
    pub integer: bool,
}

enum Field<'a> {
    Int(&'a mut i32),
    Float(&'a mut f64),
}

macro_rules! tunables {
    (ints { $($i:ident: $imin:literal..=$imax:literal,)* } floats { $($f:ident: $fmin:literal..=$fmax:literal,)* }) => {
        /// Every parameter `tune.<name>` sets, in the order of [`Params`].
        pub const TUNABLES: &[Tunable] = &[
            $(Tunable { name: stringify!($i), min: $imin as f64, max: $imax as f64, integer: true },)*
            $(Tunable { name: stringify!($f), min: $fmin, max: $fmax, integer: false },)*
        ];

        fn field<'a>(p: &'a mut Params, name: &str) -> Option<Field<'a>> {
            match name {
                $(stringify!($i) => Some(Field::Int(&mut p.$i)),)*
                $(stringify!($f) => Some(Field::Float(&mut p.$f)),)*
                _ => None,
            }
        }
    };
}

tunables! {
    ints {
        aspiration_delta: 1..=500,
        aspiration_min_depth: 1..=64,
        rfp_max_depth: 0..=64,
        rfp_margin: 0..=1000,
        rfp_improving: -1000..=1000,
        razor_max_depth: 0..=64,
        razor_base: 0..=3000,
        razor_margin: 0..=3000,
        nmp_min_depth: 1..=64,
        nmp_base_reduction: 0..=64,
        nmp_depth_divisor: 1..=64,
        nmp_eval_divisor: 1..=5000,
        nmp_verify_depth: 1..=128,
        iir_min_depth: 1..=64,
        lmr_history_divisor: 1..=1000000,
        lmr_non_pv: -8192..=8192,
        lmr_cut_node: -8192..=8192,
        lmr_not_improving: -8192..=8192,
        lmr_gives_check: -8192..=8192,
        lmr_refutation: -8192..=8192,
        lmp_base: 0..=1000,
        futility_max_depth: 0..=64,
        futility_base: 0..=3000,
        futility_margin: 0..=3000,
        futility_improving: -3000..=3000,
        history_prune_margin: 0..=1000000,
        see_prune_max_depth: 0..=64,
        see_quiet_margin: 0..=3000,
        see_capture_margin: 0..=3000,
        singular_min_depth: 1..=64,
        singular_margin: 0..=6400,
        double_extension_margin: 0..=3000,
        qs_futility_margin: 0..=3000,
        qs_see_threshold: -3000..=3000,
        history_bonus_mul: 0..=16384,
        history_bonus_offset: -16384..=16384,
        history_bonus_max: 0..=16384,
        history_malus_mul: 0..=16384,
        history_malus_offset: -16384..=16384,
        history_malus_max: 0..=16384,
    }
    floats {
        lmr_base: -4.0..=4.0,
        lmr_divisor: 0.25..=16.0,
    }
}

/// Sets the parameter `name` (a [`TUNABLES`] name, any case) to `value`, or says why not and
/// leaves the parameters as they were.
pub(crate) fn set(params: &mut Params, name: &str, value: &str) -> Result<(), OptionError> {
    let name = name.trim().to_ascii_lowercase();
    let Some(t) = TUNABLES.iter().find(|t| t.name == name) else {
        return Err(OptionError::Unknown(format!("tune.{name}")));
    };
    let value = value.trim();
    let invalid = || OptionError::Invalid {
        name: t.name,
        value: value.to_owned(),
        expected: if t.integer {
            format!("a whole number from {} to {}", t.min, t.max)
        } else {
            format!("a number from {} to {}", t.min, t.max)
        },
    };
    let v: f64 = value.parse().map_err(|_| invalid())?;
    if !(t.min..=t.max).contains(&v) || (t.integer && v.fract() != 0.0) {
        return Err(invalid());
    }
    match field(params, t.name) {
        Some(Field::Int(f)) => *f = v as i32,
        Some(Field::Float(f)) => *f = v,
        None => unreachable!("every TUNABLES name has a field"),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tunable_sets_its_field_and_only_it() {
        for t in TUNABLES {
            let mut p = Params::default();
            let v = if t.integer {
                t.max
            } else {
                (t.min + t.max) / 2.0
            };
            set(&mut p, &t.name.to_ascii_uppercase(), &format!(" {v} ")).unwrap();
            assert_ne!(p, Params::default(), "{}", t.name);
            let mut q = Params::default();
            match field(&mut q, t.name).unwrap() {
                Field::Int(f) => *f = v as i32,
                Field::Float(f) => *f = v,
            }
            assert_eq!(p, q, "{}", t.name);
        }
    }

    #[test]
    fn bad_names_and_values_are_refused_and_change_nothing() {
        let mut p = Params::default();
        let err = set(&mut p, "rfp_marginn", "90").unwrap_err();
        assert_eq!(err.to_string(), "unknown option \"tune.rfp_marginn\"");
        for bad in ["", "x", "90.5", "-1", "1001", "NaN", "inf"] {
            let err = set(&mut p, "rfp_margin", bad).unwrap_err().to_string();
            assert!(
                err.contains("a whole number from 0 to 1000"),
                "{bad}: {err}"
            );
        }
        let err = set(&mut p, "lmr_divisor", "0").unwrap_err().to_string();
        assert!(err.contains("a number from 0.25 to 16"), "{err}");
        assert_eq!(p, Params::default());
        set(&mut p, "lmr_divisor", "2.5").unwrap();
        assert_eq!(p.lmr_divisor, 2.5);
    }
}
