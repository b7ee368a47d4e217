//! `RestoreV2`: tensors read from a checkpoint (tensor bundle) by key, as a SavedModel's
//! restore function reads its variables (with the `saved-model` feature).

use tensorcast_core::{Code, TString, Tensor};

use super::spec::op_def;
use super::{kernel_error, unknown_shapes, Entry};
#[cfg(feature = "saved-model")]
use crate::attr;
use crate::error::{Error, Result};

fn op_error(code: Code, message: String) -> Error {
    kernel_error(tensorcast_core::Error::Op {
        op: "RestoreV2",
        code,
        message,
    })
}

fn strings(t: &Tensor, what: &str) -> Result<Vec<String>> {
    let v = t.as_slice::<TString>().map_err(|_| {
        op_error(
            Code::InvalidArgument,
            format!("{what} must be a string tensor, got {}", t.dtype().name()),
        )
    })?;
    Ok(v.iter()
        .map(|s| String::from_utf8_lossy(s.as_bytes()).into_owned())
        .collect())
}

#[cfg(feature = "saved-model")]
fn restore(c: &super::KernelCtx<'_>, inputs: Vec<Tensor>) -> Result<Vec<Tensor>> {
    use tensorcast_io::{checkpoint::Checkpoint, ReadOptions};
    let prefix = strings(&inputs[0], "prefix")?;
    let names = strings(&inputs[1], "tensor_names")?;
    let slices = strings(&inputs[2], "shape_and_slices")?;
    let [prefix] = prefix.as_slice() else {
        return Err(op_error(
            Code::InvalidArgument,
            format!(
                "Input prefix should have a single element, got {} elements",
                prefix.len()
            ),
        ));
    };
    let dtypes = attr::get_types(c.attrs, "dtypes").unwrap_or_default();
    if names.len() != slices.len() || names.len() != dtypes.len() {
        return Err(op_error(
            Code::InvalidArgument,
            format!(
                "Inputs tensor_names and shape_and_slices and attr dtypes should have the same number of elements: {} vs. {} vs. {}",
                names.len(),
                slices.len(),
                dtypes.len()
            ),
        ));
    }
    let ckpt = Checkpoint::open(std::path::Path::new(prefix), &ReadOptions::default())
        .map_err(|e| op_error(Code::NotFound, e.to_string()))?;
    let mut out = Vec::with_capacity(names.len());
    for ((name, slice), &dtype) in names.iter().zip(&slices).zip(&dtypes) {
        if !slice.is_empty() {
            return Err(op_error(
                Code::Unimplemented,
                format!(
                    "restoring the slice \"{slice}\" of {name}: partial restores are not supported"
                ),
            ));
        }
        if ckpt.entry(name).is_none() {
            return Err(op_error(
                Code::NotFound,
                format!("Key {name} not found in checkpoint"),
            ));
        }
        let t = ckpt
            .read(name)
            .map_err(|e| op_error(e.code(), e.to_string()))?;
        if t.dtype() != dtype {
            return Err(op_error(
                Code::InvalidArgument,
                format!(
                    "tensor_name = {name}; expected dtype {} does not equal restored dtype {}",
                    dtype.name(),
                    t.dtype().name()
                ),
            ));
        }
        out.push(t);
    }
    Ok(out)
}

pub(super) fn entries() -> Vec<Entry> {
    #[cfg(feature = "saved-model")]
    let kernel: Option<super::KernelFn> = Some(restore);
    #[cfg(not(feature = "saved-model"))]
    let kernel: Option<super::KernelFn> = {
        let _ = strings;
        None
    };
    vec![Entry {
        def: op_def("RestoreV2"),
        shape: unknown_shapes,
        kernel,
        fold: false,
        sized_by_values: false,
    }]
}
