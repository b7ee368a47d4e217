//! The `arrow.fixed_shape_tensor` canonical extension type: its field metadata, written as
//! the specification (and Arrow C++, hence pyarrow) writes it and read leniently.

use std::collections::HashMap;

use arrow_schema::{DataType as ArrowType, Field};
use serde_json::Value;

use crate::error::{Error, Result};

/// The extension's name, `arrow.fixed_shape_tensor`.
pub const FIXED_SHAPE_TENSOR: &str = "arrow.fixed_shape_tensor";
/// The field metadata key holding an extension type's name.
pub const EXTENSION_NAME_KEY: &str = "ARROW:extension:name";
/// The field metadata key holding an extension type's serialized parameters.
pub const EXTENSION_METADATA_KEY: &str = "ARROW:extension:metadata";

/// The parameters of an `arrow.fixed_shape_tensor` column: each row is one tensor of
/// `shape`, stored row-major in a `FixedSizeList<value_type>[prod(shape)]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorType {
    /// The element type (the storage list's child type).
    pub value_type: ArrowType,
    /// The physical shape of one tensor (the order of the stored elements).
    pub shape: Vec<usize>,
    /// Names of the dimensions (of the physical shape), if any.
    pub dim_names: Option<Vec<String>>,
    /// The permutation of the physical dimensions that gives the logical ones: logical
    /// dimension `i` is physical dimension `permutation[i]` (numpy's `transpose(permutation)`).
    pub permutation: Option<Vec<usize>>,
}

impl TensorType {
    /// A row-major tensor type of `value_type` elements and `shape`, with no names or
    /// permutation.
    pub fn new(value_type: ArrowType, shape: Vec<usize>) -> Self {
        Self {
            value_type,
            shape,
            dim_names: None,
            permutation: None,
        }
    }

    /// The number of elements of one tensor (`prod(shape)`), or an error when it overflows or
    /// exceeds what a `FixedSizeList` can hold.
    ///
    /// # Errors
    /// [`Error::Invalid`] when the product overflows an `i32` list size.
    pub fn list_size(&self) -> Result<i32> {
        let n = self
            .shape
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(d))
            .filter(|&n| n <= i32::MAX as usize);
        n.map(|n| n as i32).ok_or_else(|| {
            Error::Invalid(format!(
                "a tensor of shape {:?} has too many elements for an Arrow fixed-size list",
                self.shape
            ))
        })
    }

    /// The logical shape: `shape` permuted by `permutation` (the shape pyarrow's
    /// `to_numpy_ndarray` gives each row).
    pub fn logical_shape(&self) -> Vec<usize> {
        match &self.permutation {
            Some(p) => p.iter().map(|&i| self.shape[i]).collect(),
            None => self.shape.clone(),
        }
    }

    /// The serialized parameters, as the specification and Arrow C++ write them: compact JSON
    /// in the order `shape`, `permutation`, `dim_names`, absent or empty ones omitted
    /// (`{"shape":[2,5]}`).
    pub fn metadata_json(&self) -> String {
        let list = |v: &[usize]| {
            v.iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(",")
        };
        let mut s = format!("{{\"shape\":[{}]", list(&self.shape));
        if let Some(p) = self.permutation.as_ref().filter(|p| !p.is_empty()) {
            s.push_str(&format!(",\"permutation\":[{}]", list(p)));
        }
        if let Some(n) = self.dim_names.as_ref().filter(|n| !n.is_empty()) {
            let names: Vec<String> = n
                .iter()
                .map(|x| Value::from(x.as_str()).to_string())
                .collect();
            s.push_str(&format!(",\"dim_names\":[{}]", names.join(",")));
        }
        s.push('}');
        s
    }

    /// The field of a column of this type: storage `FixedSizeList<value_type>[prod(shape)]`
    /// (child `item`, nullable as Arrow C++ makes it) with the extension's metadata.
    ///
    /// # Errors
    /// [`Error::Invalid`] when the shape has too many elements.
    pub fn field(&self, name: &str) -> Result<Field> {
        let storage = ArrowType::FixedSizeList(
            std::sync::Arc::new(Field::new("item", self.value_type.clone(), true)),
            self.list_size()?,
        );
        let metadata = HashMap::from([
            (
                EXTENSION_NAME_KEY.to_string(),
                FIXED_SHAPE_TENSOR.to_string(),
            ),
            (EXTENSION_METADATA_KEY.to_string(), self.metadata_json()),
        ]);
        Ok(Field::new(name, storage, false).with_metadata(metadata))
    }

    /// The tensor type of `field`: `None` when the field is not an `arrow.fixed_shape_tensor`.
    ///
    /// # Errors
    /// [`Error::Invalid`] when it says it is one but its metadata or storage type does not fit
    /// the specification.
    pub fn of_field(field: &Field) -> Result<Option<Self>> {
        let md = field.metadata();
        if md.get(EXTENSION_NAME_KEY).map(String::as_str) != Some(FIXED_SHAPE_TENSOR) {
            return Ok(None);
        }
        let bad = |why: String| {
            Error::Invalid(format!(
                "column '{}': not a valid {FIXED_SHAPE_TENSOR}: {why}",
                field.name()
            ))
        };
        let json = md
            .get(EXTENSION_METADATA_KEY)
            .ok_or_else(|| bad("no extension metadata (the shape is required)".into()))?;
        let mut t = Self::parse_metadata(json).map_err(bad)?;
        let ArrowType::FixedSizeList(child, size) = field.data_type() else {
            return Err(bad(format!(
                "its storage is {}, not a fixed-size list",
                field.data_type()
            )));
        };
        let want = t.list_size().map_err(|e| bad(e.to_string()))?;
        if *size != want {
            return Err(bad(format!(
                "its lists hold {size} values, and shape {:?} needs {want}",
                t.shape
            )));
        }
        t.value_type = child.data_type().clone();
        Ok(Some(t))
    }

    /// Parses serialized parameters (the value type is left `Null`). Accepts what the
    /// specification allows (`shape`, optional `dim_names` and `permutation`, other keys
    /// ignored) and, leniently, `null` for an absent field and the plural `permutations` that
    /// older arrow-rs releases wrote.
    fn parse_metadata(json: &str) -> std::result::Result<Self, String> {
        let v: Value =
            serde_json::from_str(json).map_err(|e| format!("metadata is not JSON ({e})"))?;
        let obj = v
            .as_object()
            .ok_or_else(|| "metadata is not a JSON object".to_string())?;
        let dims = |key: &str| -> std::result::Result<Option<Vec<usize>>, String> {
            match obj.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::Array(a)) => a
                    .iter()
                    .map(|d| {
                        d.as_u64()
                            .and_then(|d| usize::try_from(d).ok())
                            .ok_or_else(|| format!("'{key}' holds {d}, not a size"))
                    })
                    .collect::<std::result::Result<Vec<_>, _>>()
                    .map(Some),
                Some(other) => Err(format!("'{key}' is {other}, not a list")),
            }
        };
        let shape = dims("shape")?.ok_or_else(|| "no 'shape'".to_string())?;
        let permutation = match dims("permutation")? {
            Some(p) => Some(p),
            None => dims("permutations")?,
        }
        .filter(|p| !p.is_empty());
        if let Some(p) = &permutation {
            let mut seen = vec![false; shape.len()];
            let ok = p.len() == shape.len()
                && p.iter()
                    .all(|&i| i < seen.len() && !std::mem::replace(&mut seen[i], true));
            if !ok {
                return Err(format!(
                    "permutation {p:?} is not a permutation of the {} dimensions",
                    shape.len()
                ));
            }
        }
        let dim_names = match obj.get("dim_names") {
            None | Some(Value::Null) => None,
            Some(Value::Array(a)) => Some(
                a.iter()
                    .map(|n| {
                        n.as_str()
                            .map(str::to_string)
                            .ok_or_else(|| format!("'dim_names' holds {n}, not a string"))
                    })
                    .collect::<std::result::Result<Vec<_>, _>>()?,
            ),
            Some(other) => return Err(format!("'dim_names' is {other}, not a list")),
        }
        .filter(|n| !n.is_empty());
        if let Some(n) = &dim_names {
            if n.len() != shape.len() {
                return Err(format!(
                    "{} dim_names for {} dimensions",
                    n.len(),
                    shape.len()
                ));
            }
        }
        Ok(Self {
            value_type: ArrowType::Null,
            shape,
            dim_names,
            permutation,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_is_written_as_arrow_cpp_writes_it() {
        let mut t = TensorType::new(ArrowType::Float32, vec![2, 5]);
        assert_eq!(t.metadata_json(), r#"{"shape":[2,5]}"#);
        t.permutation = Some(vec![1, 0]);
        t.dim_names = Some(vec!["h".into(), "w\"".into()]);
        assert_eq!(
            t.metadata_json(),
            r#"{"shape":[2,5],"permutation":[1,0],"dim_names":["h","w\""]}"#
        );
        t.dim_names = Some(vec![]);
        t.permutation = Some(vec![]);
        assert_eq!(t.metadata_json(), r#"{"shape":[2,5]}"#);
        assert_eq!(
            TensorType::new(ArrowType::Int8, vec![]).metadata_json(),
            r#"{"shape":[]}"#
        );
    }

    #[test]
    fn metadata_parses_the_spec_and_old_arrow_rs_and_refuses_nonsense() {
        let t = TensorType::parse_metadata(
            r#"{"shape":[100,200,500],"permutation":[2,0,1],"dim_names":["C","H","W"]}"#,
        )
        .unwrap();
        assert_eq!(t.logical_shape(), vec![500, 100, 200]);
        assert_eq!(t.dim_names.as_deref().unwrap().len(), 3);
        let old =
            TensorType::parse_metadata(r#"{"shape":[2,3],"dim_names":null,"permutations":[1,0]}"#)
                .unwrap();
        assert_eq!(old.permutation, Some(vec![1, 0]));
        for bad in [
            "",
            "[]",
            "{}",
            r#"{"shape":[-1]}"#,
            r#"{"shape":[2],"permutation":[1]}"#,
            r#"{"shape":[2,2],"permutation":[0,0]}"#,
            r#"{"shape":[2,2],"dim_names":["a"]}"#,
            r#"{"shape":[2,2],"dim_names":[1,2]}"#,
            r#"{"shape":"2"}"#,
        ] {
            assert!(TensorType::parse_metadata(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn list_size_refuses_overflow() {
        let t = TensorType::new(ArrowType::Float32, vec![1 << 20, 1 << 20]);
        assert!(t.list_size().is_err());
        assert_eq!(
            TensorType::new(ArrowType::Float32, vec![])
                .list_size()
                .unwrap(),
            1
        );
    }
}
