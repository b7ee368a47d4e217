//! `OpDef`s from TensorFlow's `REGISTER_OP` spec lines (`ops.spec` beside this file, generated
//! by `gen_op_defs.py`), parsed once, at first use.
//!
//! Why spec lines and not `OpDef` constants: one line per input, output and attr reads as
//! TensorFlow's own registration does, ops with the same signature (`Sum`, `Mean`, `Max`, ...)
//! share one spec, and the generated file is a fifth of the constants' size. The file is data
//! (a block a signature: `op Sum Mean ...`, then `in`, `out`, `attr` and `trait` lines), kept
//! beside the code as a plain table and read with `include_str!`. The forms read are
//! the ones TensorFlow's op builder reads, as far as the registry's ops use them:
//!
//! | line | meaning |
//! |---|---|
//! | `a: T`, `x: float`, `args: Tin` | an input or output of a type attr, a fixed dtype, a `list(type)` attr |
//! | `values: N * T`, `keys: N * string` | `N` of a type attr, `N` of a fixed dtype |
//! | `T: type`, `T: {half, float}`, `Tdense: list({float, int64})` | a type attr, with allowed types |
//! | `padding: {'SAME', 'VALID'}` | a string attr with allowed values |
//! | `N: int >= 2`, `ksize: list(int) >= 4` | a minimum (of the value, or of the list's length) |
//! | `... = false`, `= 1`, `= 0.2`, `= 'NHWC'`, `= DT_INT32`, `= [1, 1]`, `= []`, `= { unknown_rank: true }` | a default |
//!
//! The parsed `OpDef`s live as long as the process (their slices are leaked once, in the
//! `OnceLock` below), so the registry keeps handing out `&'static OpDef` as it did when they were
//! constants; lookups after the first are a hash map's.

use std::collections::HashMap;
use std::sync::OnceLock;

use tensorcast_core::DataType;

use crate::registry::opdef::{ArgDef, ArgType, AttrDef, AttrDefault, AttrKind, OpDef};

/// The generated spec table (see the module docs).
const OPS_SPEC: &str = include_str!("ops.spec");

/// An op as `REGISTER_OP` declares it: one spec line per input, output and attr.
#[derive(Debug, Default)]
pub(crate) struct OpSpec {
    /// The ops with this signature.
    pub(crate) names: Vec<&'static str>,
    /// `name: type` of each input.
    pub(crate) inputs: Vec<&'static str>,
    /// `name: type` of each output.
    pub(crate) outputs: Vec<&'static str>,
    /// `name: kind [>= minimum] [= default]` of each attr.
    pub(crate) attrs: Vec<&'static str>,
    /// `SetIsCommutative()`, `SetIsAggregate()`, `SetIsStateful()`.
    pub(crate) traits: Vec<Trait>,
}

/// An op property `REGISTER_OP` sets with a call of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Trait {
    Commutative,
    Aggregate,
    Stateful,
}

/// The blocks of a spec table: `op NAME...` starts one, `in`, `out`, `attr` and `trait` lines
/// fill it; blank lines and `#` comments are skipped.
pub(crate) fn read_specs(text: &'static str) -> Result<Vec<OpSpec>, String> {
    let mut specs: Vec<OpSpec> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let at = |e: String| format!("line {}: {e}", i + 1);
        let (keyword, rest) = line.split_once(' ').unwrap_or((line, ""));
        if keyword == "op" {
            specs.push(OpSpec {
                names: rest.split_whitespace().collect(),
                ..OpSpec::default()
            });
            continue;
        }
        let spec = specs
            .last_mut()
            .ok_or_else(|| at(format!("`{line}` before the first `op`")))?;
        match keyword {
            "in" => spec.inputs.push(rest),
            "out" => spec.outputs.push(rest),
            "attr" => spec.attrs.push(rest),
            "trait" => spec.traits.push(match rest {
                "Commutative" => Trait::Commutative,
                "Aggregate" => Trait::Aggregate,
                "Stateful" => Trait::Stateful,
                _ => return Err(at(format!("no trait `{rest}`"))),
            }),
            _ => {
                return Err(at(format!(
                    "`{line}` is not an op, in, out, attr or trait line"
                )))
            }
        }
    }
    Ok(specs)
}

/// The blocks of `ops.spec`.
fn specs() -> &'static [OpSpec] {
    static SPECS: OnceLock<Vec<OpSpec>> = OnceLock::new();
    SPECS.get_or_init(|| read_specs(OPS_SPEC).unwrap_or_else(|e| panic!("ops.spec, {e}")))
}

/// Every generated `OpDef`, in `ops.spec`'s order.
pub(crate) fn every_op() -> &'static [OpDef] {
    parsed().0
}

/// The generated `OpDef` of `name`. The names are the registry's own (each entry names its op),
/// so a name `ops.spec` lacks is a bug of the source, which every registry test reports.
pub(crate) fn op_def(name: &str) -> &'static OpDef {
    match parsed().1.get(name) {
        Some(&i) => &parsed().0[i],
        None => panic!("{name} is not in ops.spec: add it to OPS in gen_op_defs.py"),
    }
}

fn parsed() -> &'static (&'static [OpDef], HashMap<&'static str, usize>) {
    static PARSED: OnceLock<(&'static [OpDef], HashMap<&'static str, usize>)> = OnceLock::new();
    PARSED.get_or_init(|| {
        let mut defs = Vec::new();
        for spec in specs() {
            for &name in &spec.names {
                match parse(name, spec) {
                    Ok(d) => defs.push(d),
                    Err(e) => panic!("ops.spec, {name}: {e}"),
                }
            }
        }
        let defs: &'static [OpDef] = defs.leak();
        let by_name = defs.iter().enumerate().map(|(i, d)| (d.name, i)).collect();
        (defs, by_name)
    })
}

/// The `OpDef` of op `name` with the signature `spec`.
pub(crate) fn parse(name: &'static str, spec: &OpSpec) -> Result<OpDef, String> {
    let attrs = spec
        .attrs
        .iter()
        .map(|l| parse_attr(l))
        .collect::<Result<Vec<_>, _>>()?;
    let args = |lines: &[&'static str]| {
        lines
            .iter()
            .map(|l| parse_arg(l, &attrs))
            .collect::<Result<Vec<_>, _>>()
            .map(Vec::leak)
    };
    Ok(OpDef {
        name,
        inputs: args(&spec.inputs)?,
        outputs: args(&spec.outputs)?,
        attrs: attrs.leak(),
        commutative: spec.traits.contains(&Trait::Commutative),
        aggregate: spec.traits.contains(&Trait::Aggregate),
        stateful: spec.traits.contains(&Trait::Stateful),
    })
}

/// `name: rest`.
fn split_name(line: &'static str) -> Result<(&'static str, &'static str), String> {
    line.split_once(": ")
        .ok_or_else(|| format!("`{line}` is not `name: type`"))
}

/// A dtype by TensorFlow's name (`float`, `int32`).
fn dtype(name: &str) -> Result<DataType, String> {
    DataType::from_name(name).ok_or_else(|| format!("no dtype `{name}`"))
}

/// `{a, b, c}`'s items, if `text` is braced.
fn braced(text: &'static str) -> Option<impl Iterator<Item = &'static str>> {
    let inner = text.strip_prefix('{')?.strip_suffix('}')?;
    Some(inner.split(',').map(str::trim))
}

/// `'text'` without its quotes.
fn unquote(text: &'static str) -> Result<&'static str, String> {
    text.strip_prefix('\'')
        .and_then(|t| t.strip_suffix('\''))
        .ok_or_else(|| format!("`{text}` is not a quoted string"))
}

/// An input or output: `a: T`, `x: float`, `args: Tin`, `values: N * T`, `keys: N * string`.
fn parse_arg(line: &'static str, attrs: &[AttrDef]) -> Result<ArgDef, String> {
    let (name, ty) = split_name(line)?;
    let kind_of = |attr: &str| attrs.iter().find(|a| a.name == attr).map(|a| a.kind);
    let ty = match ty.split_once(" * ") {
        Some((number, elem)) => {
            if kind_of(number) != Some(AttrKind::Int) {
                return Err(format!("`{line}`: `{number}` is not an int attr"));
            }
            match kind_of(elem) {
                Some(AttrKind::Type) => ArgType::List { number, ty: elem },
                _ => ArgType::FixedList {
                    number,
                    dtype: dtype(elem)?,
                },
            }
        }
        None => match kind_of(ty) {
            Some(AttrKind::Type) => ArgType::Attr(ty),
            Some(AttrKind::ListType) => ArgType::TypeList(ty),
            _ => ArgType::Fixed(dtype(ty)?),
        },
    };
    Ok(ArgDef { name, ty })
}

/// An attr: `name: kind [>= minimum] [= default]`.
fn parse_attr(line: &'static str) -> Result<AttrDef, String> {
    let (name, rest) = split_name(line)?;
    let (rest, default) = match rest.split_once(" = ") {
        Some((r, d)) => (r, Some(d)),
        None => (rest, None),
    };
    let (kind, minimum) = match rest.split_once(" >= ") {
        Some((k, m)) => (
            k,
            Some(m.parse::<i64>().map_err(|e| format!("`{line}`: {e}"))?),
        ),
        None => (rest, None),
    };
    let mut attr = AttrDef {
        name,
        kind: AttrKind::Type,
        default: None,
        allowed: None,
        allowed_strings: None,
        minimum,
    };
    let types = |items: &mut dyn Iterator<Item = &'static str>| {
        items
            .map(dtype)
            .collect::<Result<Vec<_>, _>>()
            .map(|v| &*v.leak())
    };
    if let Some(list) = kind.strip_prefix("list(").and_then(|k| k.strip_suffix(')')) {
        if let Some(mut items) = braced(list) {
            attr.kind = AttrKind::ListType;
            attr.allowed = Some(types(&mut items)?);
        }
    }
    if attr.allowed.is_none() {
        match braced(kind) {
            Some(items) if kind.contains('\'') => {
                attr.kind = AttrKind::String;
                let strings = items.map(unquote).collect::<Result<Vec<_>, _>>()?;
                attr.allowed_strings = Some(strings.leak());
            }
            Some(mut items) => attr.allowed = Some(types(&mut items)?),
            None => attr.kind = kind_by_name(kind).ok_or_else(|| format!("`{line}`: no kind"))?,
        }
    }
    if let Some(d) = default {
        let d = parse_default(attr.kind, d).map_err(|e| format!("`{line}`: {e}"))?;
        attr.default = Some(d);
    }
    Ok(attr)
}

/// The kind named `name` (`int`, `list(int)`).
fn kind_by_name(name: &str) -> Option<AttrKind> {
    use AttrKind::*;
    [
        Type, Bool, Shape, Tensor, Int, Float, String, Func, ListInt, ListType, ListFloat,
        ListString, ListShape, ListFunc,
    ]
    .into_iter()
    .find(|k| k.name() == name)
}

/// A default of an attr of `kind`, as the spec line writes it.
fn parse_default(kind: AttrKind, text: &'static str) -> Result<AttrDefault, String> {
    let list = || {
        text.strip_prefix('[')
            .and_then(|t| t.strip_suffix(']'))
            .map(|t| t.split(", ").filter(|s| !s.is_empty()))
            .ok_or_else(|| format!("`{text}` is not a list"))
    };
    Ok(match kind {
        AttrKind::Type => {
            let name = text.strip_prefix("DT_").ok_or("a type default is DT_...")?;
            AttrDefault::Type(dtype(&name.to_ascii_lowercase())?)
        }
        AttrKind::Bool => AttrDefault::Bool(text.parse().map_err(|_| "not a bool")?),
        AttrKind::Int => AttrDefault::Int(text.parse().map_err(|_| "not an int")?),
        AttrKind::Float => AttrDefault::Float(text.parse().map_err(|_| "not a float")?),
        AttrKind::String => AttrDefault::Str(unquote(text)?),
        AttrKind::Shape if text == "{ unknown_rank: true }" => AttrDefault::UnknownShape,
        AttrKind::ListInt => {
            let v = list()?
                .map(|i| i.parse::<i64>().map_err(|e| e.to_string()))
                .collect::<Result<Vec<_>, _>>()?;
            AttrDefault::ListInt(v.leak())
        }
        AttrKind::ListString => {
            let v = list()?.map(unquote).collect::<Result<Vec<_>, _>>()?;
            AttrDefault::ListStr(v.leak())
        }
        AttrKind::ListShape if list()?.next().is_none() => AttrDefault::ListShape,
        _ => return Err(format!("no default of kind {} reads", kind.name())),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attr(line: &'static str) -> String {
        format!("{:?}", parse_attr(line))
    }

    #[test]
    fn attr_lines_every_form_parses() {
        let t = parse_attr("T: {half, float} = DT_FLOAT").unwrap();
        assert_eq!(t.kind, AttrKind::Type);
        assert_eq!(t.allowed, Some(&[DataType::HALF, DataType::FLOAT][..]));
        assert!(matches!(
            t.default,
            Some(AttrDefault::Type(DataType::FLOAT))
        ));
        let l = parse_attr("Tdense: list({float, int64, string}) >= 0").unwrap();
        assert_eq!((l.kind, l.minimum), (AttrKind::ListType, Some(0)));
        assert_eq!(l.allowed.map(<[_]>::len), Some(3));
        let s = parse_attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'").unwrap();
        assert_eq!(s.kind, AttrKind::String);
        assert_eq!(s.allowed_strings, Some(&["NHWC", "NCHW"][..]));
        assert!(matches!(s.default, Some(AttrDefault::Str("NHWC"))));
        let n = parse_attr("N: int >= 2").unwrap();
        assert_eq!(
            (n.kind, n.minimum, n.allowed),
            (AttrKind::Int, Some(2), None)
        );
        assert!(n.default.is_none());
        for (line, want) in [
            ("a: bool = true", "Bool(true)"),
            ("a: int = -1", "Int(-1)"),
            ("a: float = 1e-04", "Float(0.0001)"),
            ("a: float = 0.2", "Float(0.2)"),
            ("a: string = ''", "Str(\"\")"),
            ("a: shape = { unknown_rank: true }", "UnknownShape"),
            ("a: list(int) = [1, 1, 1, 1]", "ListInt([1, 1, 1, 1])"),
            ("a: list(int) = []", "ListInt([])"),
            ("a: list(string) = []", "ListStr([])"),
            ("a: list(string) = ['x', 'y']", "ListStr([\"x\", \"y\"])"),
            ("a: list(shape) >= 0 = []", "ListShape"),
        ] {
            assert!(attr(line).contains(&format!("Some({want})")), "{line}");
        }
        for kind in ["func", "list(func)", "list(type)", "tensor", "list(float)"] {
            let line: &'static str = format!("a: {kind}").leak();
            assert_eq!(parse_attr(line).map(|a| a.kind.name()), Ok(kind));
        }
    }

    #[test]
    fn attr_lines_malformed_are_refused() {
        for line in [
            "no colon",
            "a: kind",
            "a: {half, floaty}",
            "a: int >= x",
            "a: int = x",
            "a: type = float",
            "a: string = NHWC",
            "a: shape = [2]",
            "a: list(shape) = [[2]]",
            "a: func = f",
        ] {
            assert!(parse_attr(line).is_err(), "{line}");
        }
    }

    #[test]
    fn arg_lines_every_form_parses() {
        let attrs = [
            parse_attr("T: type").unwrap(),
            parse_attr("N: int >= 1").unwrap(),
            parse_attr("Tin: list(type) >= 0").unwrap(),
        ];
        let arg = |l: &'static str| format!("{:?}", parse_arg(l, &attrs).map(|a| a.ty));
        assert_eq!(arg("a: T"), "Ok(Attr(\"T\"))");
        assert_eq!(arg("x: float"), "Ok(Fixed(DT_FLOAT))");
        assert_eq!(arg("args: Tin"), "Ok(TypeList(\"Tin\"))");
        assert_eq!(arg("v: N * T"), "Ok(List { number: \"N\", ty: \"T\" })");
        assert_eq!(
            arg("k: N * string"),
            "Ok(FixedList { number: \"N\", dtype: DT_STRING })"
        );
        for bad in ["a: U", "a: M * T", "a: T * T", "a: N * U", "a"] {
            assert!(parse_arg(bad, &attrs).is_err(), "{bad}");
        }
    }

    #[test]
    fn spec_blocks_read_and_malformed_are_refused() {
        let specs = read_specs(
            "# c\n\nop Sum Mean\n  in input: T\n  out output: T\n  attr T: type\n  trait Stateful\n",
        )
        .unwrap();
        assert_eq!(specs.len(), 1);
        assert_eq!(specs[0].names, ["Sum", "Mean"]);
        assert_eq!(
            (
                &specs[0].inputs[..],
                &specs[0].outputs[..],
                &specs[0].attrs[..]
            ),
            (&["input: T"][..], &["output: T"][..], &["T: type"][..])
        );
        assert_eq!(specs[0].traits, [Trait::Stateful]);
        for bad in ["in a: T", "op X\n  trait Pure", "op X\n  input a: T"] {
            assert!(read_specs(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn every_spec_parses_and_names_are_unique() {
        let all = every_op();
        assert_eq!(
            all.len(),
            specs().iter().map(|s| s.names.len()).sum::<usize>()
        );
        let names: std::collections::HashSet<_> = all.iter().map(|d| d.name).collect();
        assert_eq!(names.len(), all.len());
        assert!(std::ptr::eq(op_def("Sum"), op_def("Sum")));
        assert_eq!(op_def("Mean").name, "Mean");
    }
}
