//! The object element types: strings, resource handles and variants.

use std::fmt;

use bytes::Bytes;

use crate::{DataType, PartialTensorShape, Tensor};

/// One element of a `string` tensor (TensorFlow's `tstring`): arbitrary bytes, not necessarily
/// UTF-8. Cheap to clone (it shares a `bytes::Bytes`), so decoded protos can hand out strings
/// without copying them.
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TString(Bytes);

impl TString {
    /// An empty string.
    pub const fn new() -> Self {
        Self(Bytes::new())
    }

    /// The bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The shared bytes.
    pub fn to_bytes(&self) -> Bytes {
        self.0.clone()
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True if empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The string, if it is UTF-8.
    pub fn to_str(&self) -> Option<&str> {
        std::str::from_utf8(&self.0).ok()
    }
}

impl From<&str> for TString {
    fn from(s: &str) -> Self {
        Self(Bytes::copy_from_slice(s.as_bytes()))
    }
}

impl From<String> for TString {
    fn from(s: String) -> Self {
        Self(Bytes::from(s))
    }
}

impl From<&[u8]> for TString {
    fn from(s: &[u8]) -> Self {
        Self(Bytes::copy_from_slice(s))
    }
}

impl From<Vec<u8>> for TString {
    fn from(s: Vec<u8>) -> Self {
        Self(Bytes::from(s))
    }
}

impl From<Bytes> for TString {
    fn from(s: Bytes) -> Self {
        Self(s)
    }
}

impl AsRef<[u8]> for TString {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl fmt::Debug for TString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", String::from_utf8_lossy(&self.0))
    }
}

/// One element of a `resource` tensor: a handle naming a resource on a device, as
/// TensorFlow's `ResourceHandle`.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct ResourceHandle {
    /// The device holding the resource.
    pub device: String,
    /// The container of the resource.
    pub container: String,
    /// The resource's name, unique within its container.
    pub name: String,
    /// A hash of the resource's type.
    pub hash_code: u64,
    /// The resource's type name, for debugging.
    pub maybe_type_name: String,
    /// The dtypes and shapes of the tensors the resource holds, when known.
    pub dtypes_and_shapes: Vec<(DataType, PartialTensorShape)>,
}

impl ResourceHandle {
    /// A handle with just a name.
    pub fn named(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            ..Self::default()
        }
    }

    /// TensorFlow's `ResourceHandle::SummarizeValue`:
    /// `ResourceHandle(name="a", device="", container="", type="", dtype and shapes : "[  ]")`.
    pub fn summarize(&self) -> String {
        let shapes: Vec<String> = self
            .dtypes_and_shapes
            .iter()
            .map(|(d, s)| format!("DType enum: {}, Shape: {}", d.number(), s))
            .collect();
        format!(
            "ResourceHandle(name=\"{}\", device=\"{}\", container=\"{}\", type=\"{}\", dtype and shapes : \"[ {} ]\")",
            self.name,
            self.device,
            self.container,
            self.maybe_type_name,
            shapes.join(",")
        )
    }
}

impl fmt::Debug for ResourceHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.summarize())
    }
}

/// The serialized form of a variant value (TensorFlow's `VariantTensorData`): a type name,
/// opaque metadata and nested tensors.
#[derive(Clone, Default, PartialEq)]
pub struct VariantTensorData {
    /// The registered type name of the value.
    pub type_name: String,
    /// Opaque bytes the type's encoder wrote.
    pub metadata: Bytes,
    /// Nested tensors.
    pub tensors: Vec<Tensor>,
}

impl fmt::Debug for VariantTensorData {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("VariantTensorData")
            .field("type_name", &self.type_name)
            .field("metadata_bytes", &self.metadata.len())
            .field("tensors", &self.tensors.len())
            .finish()
    }
}

/// The type name TensorFlow gives a `Tensor` held in a variant.
pub(crate) const TENSOR_VARIANT_TYPE_NAME: &str = "tensorflow::Tensor";

/// One element of a `variant` tensor: a type-erased value. tensorcast knows one value type
/// natively, a nested [`Tensor`] (as TensorFlow's `Variant(Tensor)`); values of other types are
/// kept in their encoded form.
#[derive(Clone, Default, PartialEq)]
pub enum Variant {
    /// No value (a default-constructed TensorFlow `Variant`).
    #[default]
    Empty,
    /// A tensor.
    Tensor(Box<Tensor>),
    /// A value of another type, as encoded.
    Encoded(VariantTensorData),
}

impl Variant {
    /// The value's type name (`tensorflow::Tensor` for a tensor, empty for none).
    pub fn type_name(&self) -> &str {
        match self {
            Variant::Empty => "",
            Variant::Tensor(_) => TENSOR_VARIANT_TYPE_NAME,
            Variant::Encoded(d) => &d.type_name,
        }
    }

    /// TensorFlow's `Variant::SummarizeValue`: `[empty]`, a tensor's `DebugString()`, or the
    /// bracketed type name of another value.
    pub fn summarize(&self) -> String {
        match self {
            Variant::Empty => "[empty]".to_string(),
            Variant::Tensor(t) => t.debug_string(3),
            Variant::Encoded(d) => format!("[{}]", d.type_name),
        }
    }

    /// The encoded form (`VariantTensorData`) of this value.
    pub fn encode(&self) -> VariantTensorData {
        match self {
            Variant::Empty => VariantTensorData::default(),
            Variant::Tensor(t) => VariantTensorData {
                type_name: TENSOR_VARIANT_TYPE_NAME.to_string(),
                metadata: Bytes::new(),
                tensors: vec![(**t).clone()],
            },
            Variant::Encoded(d) => d.clone(),
        }
    }

    /// Rebuilds a value from its encoded form: a tensor for `tensorflow::Tensor` with exactly
    /// one nested tensor, otherwise the encoded form itself.
    pub fn decode(data: VariantTensorData) -> Self {
        if data.type_name == TENSOR_VARIANT_TYPE_NAME && data.tensors.len() == 1 {
            let mut data = data;
            return Variant::Tensor(Box::new(data.tensors.remove(0)));
        }
        if data.type_name.is_empty() && data.tensors.is_empty() && data.metadata.is_empty() {
            return Variant::Empty;
        }
        Variant::Encoded(data)
    }
}

impl From<Tensor> for Variant {
    fn from(t: Tensor) -> Self {
        Variant::Tensor(Box::new(t))
    }
}

impl fmt::Debug for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.summarize())
    }
}
