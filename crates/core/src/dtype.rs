//! [`DataType`]: TensorFlow's dtype enum, with one table as the single source of truth.

use std::fmt;

/// A TensorFlow data type: the `DataType` enum of `types.proto`, as its proto number.
///
/// It is a number rather than a Rust enum because TensorFlow's enum is open: the `_REF` values
/// (base + 100) and numbers no build knows still travel through protos and print as
/// `unknown dtype enum (N)`. Every known value has an associated constant
/// ([`DataType::FLOAT`], [`DataType::BFLOAT16`], ...), usable in `match` patterns.
///
/// ```
/// use tensorcast_core::DataType;
/// assert_eq!(DataType::FLOAT.name(), "float");
/// assert_eq!(DataType::from_name("float16"), Some(DataType::HALF));
/// assert_eq!(DataType::FLOAT.to_ref().name(), "float_ref");
/// assert_eq!(DataType::from_number(150).name(), "unknown dtype enum (50)_ref");
/// assert_eq!(DataType::COMPLEX128.size(), 16);
/// assert_eq!(DataType::STRING.size(), 0);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct DataType(i32);

/// TensorFlow's `kDataTypeRefOffset`.
pub const REF_OFFSET: i32 = 100;

/// What kind of value a dtype holds: the column [`dispatch!`](crate::dispatch) selects on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Category {
    /// `half`, `bfloat16`, `float`, `double`.
    Float,
    /// The float8 kinds and `float4_e2m1fn`.
    Minifloat,
    /// Signed integers, `int2` to `int64`.
    Int,
    /// Unsigned integers, `uint2` to `uint64`.
    Uint,
    /// `complex64`, `complex128`.
    Complex,
    /// `qint8`, `quint8`, `qint16`, `quint16`, `qint32`.
    Quantized,
    /// `bool`.
    Bool,
    /// `string`, `resource`, `variant`: elements are objects, not bytes.
    Object,
}

/// One row of the dtype table.
#[derive(Debug, Clone, Copy)]
pub struct DataTypeInfo {
    /// The proto number.
    pub number: i32,
    /// `DataTypeString`.
    pub name: &'static str,
    /// The proto enum name (`DT_FLOAT`).
    pub proto_name: &'static str,
    /// `DataTypeSize` in bytes (0 for string, resource, variant, invalid).
    pub size: usize,
    /// The alignment of the Rust element type, in bytes.
    pub align: usize,
    /// `DataTypeCanUseMemcpy`: every category but [`Category::Object`].
    pub memcpy: bool,
    /// What kind of value it holds (`None` for `INVALID`).
    pub category: Option<Category>,
    /// In TensorFlow's `Bitcast` type list.
    pub bitcast: bool,
    /// The Rust element type that holds one value.
    pub rust_type: &'static str,
}

/// The dtype table, the single source of truth: calls `$callback!` with every row as
/// `CONST = number, "name", size, category, bitcastable, RustType;`. It generates the
/// [`DataType`] constants and [`DATA_TYPES`] (here), the [`crate::Element`] impls and the
/// [`dispatch!`](crate::dispatch) macro.
#[doc(hidden)]
#[macro_export]
macro_rules! __dtype_table {
    ($callback:path $(, $args:tt)*) => {
        $callback! { $($args)* ;
            FLOAT = 1, "float", 4, float, true, f32;
            DOUBLE = 2, "double", 8, float, true, f64;
            INT32 = 3, "int32", 4, int, true, i32;
            UINT8 = 4, "uint8", 1, uint, true, u8;
            INT16 = 5, "int16", 2, int, true, i16;
            INT8 = 6, "int8", 1, int, true, i8;
            STRING = 7, "string", 0, object, false, $crate::TString;
            COMPLEX64 = 8, "complex64", 8, complex, true, $crate::Complex<f32>;
            INT64 = 9, "int64", 8, int, true, i64;
            BOOL = 10, "bool", 1, bool, false, bool;
            QINT8 = 11, "qint8", 1, quantized, true, $crate::types::QInt8;
            QUINT8 = 12, "quint8", 1, quantized, true, $crate::types::QUInt8;
            QINT32 = 13, "qint32", 4, quantized, true, $crate::types::QInt32;
            BFLOAT16 = 14, "bfloat16", 2, float, true, $crate::bf16;
            QINT16 = 15, "qint16", 2, quantized, true, $crate::types::QInt16;
            QUINT16 = 16, "quint16", 2, quantized, true, $crate::types::QUInt16;
            UINT16 = 17, "uint16", 2, uint, true, u16;
            COMPLEX128 = 18, "complex128", 16, complex, true, $crate::Complex<f64>;
            HALF = 19, "half", 2, float, true, $crate::f16;
            RESOURCE = 20, "resource", 0, object, false, $crate::ResourceHandle;
            VARIANT = 21, "variant", 0, object, false, $crate::Variant;
            UINT32 = 22, "uint32", 4, uint, true, u32;
            UINT64 = 23, "uint64", 8, uint, true, u64;
            FLOAT8_E5M2 = 24, "float8_e5m2", 1, minifloat, false, $crate::types::Float8E5M2;
            FLOAT8_E4M3FN = 25, "float8_e4m3fn", 1, minifloat, false, $crate::types::Float8E4M3FN;
            FLOAT8_E4M3FNUZ = 26, "float8_e4m3fnuz", 1, minifloat, false, $crate::types::Float8E4M3FNUZ;
            FLOAT8_E4M3B11FNUZ = 27, "float8_e4m3b11fnuz", 1, minifloat, false, $crate::types::Float8E4M3B11FNUZ;
            FLOAT8_E5M2FNUZ = 28, "float8_e5m2fnuz", 1, minifloat, false, $crate::types::Float8E5M2FNUZ;
            INT4 = 29, "int4", 1, int, false, $crate::types::Int4;
            UINT4 = 30, "uint4", 1, uint, false, $crate::types::UInt4;
            INT2 = 31, "int2", 1, int, false, $crate::types::Int2;
            UINT2 = 32, "uint2", 1, uint, false, $crate::types::UInt2;
            FLOAT4_E2M1FN = 33, "float4_e2m1fn", 1, minifloat, false, $crate::types::Float4E2M1FN;
        }
    };
}

/// The [`Category`] spelled as the table's column.
macro_rules! category {
    (float) => {
        Category::Float
    };
    (minifloat) => {
        Category::Minifloat
    };
    (int) => {
        Category::Int
    };
    (uint) => {
        Category::Uint
    };
    (complex) => {
        Category::Complex
    };
    (quantized) => {
        Category::Quantized
    };
    (bool) => {
        Category::Bool
    };
    (object) => {
        Category::Object
    };
}

macro_rules! constants_and_rows {
    (; $( $konst:ident = $num:literal, $name:literal, $size:expr, $cat:ident, $bitcast:literal, $ty:ty; )*) => {
        impl DataType {
            /// `DT_INVALID` (0): `INVALID`, no element type.
            pub const INVALID: DataType = DataType(0);
            $(
                #[doc = concat!("`DT_", stringify!($konst), "` (", stringify!($num), "): `", $name, "`, held as `", stringify!($ty), "`.")]
                pub const $konst: DataType = DataType($num);
            )*
        }
        /// The dtype table: every base value 0..=33 in proto-number order.
        pub const DATA_TYPES: &[DataTypeInfo] = &[
            DataTypeInfo { number: 0, name: "INVALID", proto_name: "DT_INVALID", size: 0, align: 1, memcpy: false, category: None, bitcast: false, rust_type: "()" },
            $( DataTypeInfo {
                number: $num,
                name: $name,
                proto_name: concat!("DT_", stringify!($konst)),
                size: $size,
                align: std::mem::align_of::<$ty>(),
                memcpy: !matches!(category!($cat), Category::Object),
                category: Some(category!($cat)),
                bitcast: $bitcast,
                rust_type: stringify!($ty),
            }, )*
        ];
    };
}

crate::__dtype_table!(constants_and_rows);

/// The largest base (non-ref) value.
const MAX_BASE: i32 = 33;

/// A dtype list as TensorFlow's op registrations write one (`"float, double, int32"`, the
/// names of [`DataType::name`]), read at compile time: `dtypes!("half, float")` is
/// `&[DataType::HALF, DataType::FLOAT]`, a `&'static [DataType]` usable in `const` items, and a
/// name that is not a dtype's stops the build. Type lists are TensorFlow's facts in
/// TensorFlow's order (the order its messages print them in); one line each keeps them
/// readable next to the registrations they come from.
///
/// ```
/// use tensorcast_core::{dtypes, DataType};
/// const T: &[DataType] = dtypes!("bfloat16, half, float");
/// assert_eq!(T, [DataType::BFLOAT16, DataType::HALF, DataType::FLOAT]);
/// ```
#[macro_export]
macro_rules! dtypes {
    ($names:literal) => {{
        const LIST: [$crate::DataType; $crate::dtype::count_names($names)] =
            $crate::dtype::parse_names($names);
        &LIST
    }};
}

/// How many comma-separated names `list` holds (`dtypes!`'s array length).
#[doc(hidden)]
pub const fn count_names(list: &str) -> usize {
    let b = list.as_bytes();
    let mut n = 1;
    let mut i = 0;
    while i < b.len() {
        if b[i] == b',' {
            n += 1;
        }
        i += 1;
    }
    n
}

/// The dtypes `list` names, at compile time (`dtypes!`); panics (a build error in a `const`)
/// on a name that is no dtype's.
#[doc(hidden)]
pub const fn parse_names<const N: usize>(list: &str) -> [DataType; N] {
    let b = list.as_bytes();
    let mut out = [DataType(0); N];
    let (mut start, mut k) = (0, 0);
    while k < N {
        // One name: from `start` to the next comma (or the end), spaces trimmed.
        let mut end = start;
        while end < b.len() && b[end] != b',' {
            end += 1;
        }
        let (mut lo, mut hi) = (start, end);
        while lo < hi && b[lo] == b' ' {
            lo += 1;
        }
        while hi > lo && b[hi - 1] == b' ' {
            hi -= 1;
        }
        out[k] = by_name_bytes(b, lo, hi);
        start = end + 1;
        k += 1;
    }
    out
}

/// The base dtype named `b[lo..hi]` (`parse_names`).
const fn by_name_bytes(b: &[u8], lo: usize, hi: usize) -> DataType {
    let mut row = 1;
    while row < DATA_TYPES.len() {
        let name = DATA_TYPES[row].name.as_bytes();
        if name.len() == hi - lo {
            let mut j = 0;
            while j < name.len() && name[j] == b[lo + j] {
                j += 1;
            }
            if j == name.len() {
                return DataType(DATA_TYPES[row].number);
            }
        }
        row += 1;
    }
    panic!("dtypes!: a name that is no dtype's")
}

impl DataType {
    /// `DT_FLOAT_REF` (101).
    pub const FLOAT_REF: DataType = DataType(101);

    /// Every supported base dtype (1..=33), in proto-number order.
    pub fn all() -> impl Iterator<Item = DataType> {
        (1..=MAX_BASE).map(DataType)
    }

    /// The dtype with this proto number (any number: unknown ones are kept as they are).
    pub const fn from_number(n: i32) -> DataType {
        DataType(n)
    }

    /// The proto number.
    pub const fn number(self) -> i32 {
        self.0
    }

    /// The table row of a known base dtype (refs and unknown numbers have none).
    pub fn info(self) -> Option<&'static DataTypeInfo> {
        if (0..=MAX_BASE).contains(&self.0) {
            Some(&DATA_TYPES[self.0 as usize])
        } else {
            None
        }
    }

    /// True for `_REF` values (`IsRefType`: the number is greater than 100).
    pub const fn is_ref(self) -> bool {
        self.0 > REF_OFFSET
    }

    /// The base type of a ref (`RemoveRefType`); a non-ref is returned as is.
    pub const fn base(self) -> DataType {
        if self.is_ref() {
            DataType(self.0 - REF_OFFSET)
        } else {
            self
        }
    }

    /// The `_REF` variant (`MakeRefType`); a ref is returned as is.
    pub const fn to_ref(self) -> DataType {
        if self.is_ref() {
            self
        } else {
            DataType(self.0 + REF_OFFSET)
        }
    }

    /// True for a value of the enum (a base 0..=33 or its ref).
    pub fn is_known(self) -> bool {
        (0..=MAX_BASE).contains(&self.base().0) && !(self.is_ref() && self.base().0 == 0)
    }

    /// True for a base dtype that tensors can hold (1..=33: TensorFlow's "CASES" list).
    pub fn is_supported(self) -> bool {
        (1..=MAX_BASE).contains(&self.0)
    }

    /// `DataTypeString`: `float`, `float_ref`, `unknown dtype enum (N)`.
    pub fn name(self) -> String {
        if self.is_ref() {
            // One offset only, as TensorFlow strips it (and no recursion: 2^31 - 1 would
            // recurse 21 million times): 250 is `unknown dtype enum (150)_ref`.
            let base = self.base();
            return match base.info() {
                Some(i) => format!("{}_ref", i.name),
                None => format!("unknown dtype enum ({})_ref", base.0),
            };
        }
        match self.info() {
            Some(i) => i.name.to_string(),
            None => format!("unknown dtype enum ({})", self.0),
        }
    }

    /// The proto enum name: `DT_FLOAT`, `DT_FLOAT_REF`; `None` for numbers outside the enum.
    pub fn proto_name(self) -> Option<String> {
        if self.is_ref() {
            let base = self.base();
            if base.0 == 0 {
                return None;
            }
            return base.info().map(|i| format!("{}_REF", i.proto_name));
        }
        self.info().map(|i| i.proto_name.to_string())
    }

    /// `DataTypeFromString`: the names above plus `float32`, `float64`, `float16`, and a `_ref`
    /// suffix. `INVALID` is not accepted.
    pub fn from_name(s: &str) -> Option<DataType> {
        if let Some(base) = s.strip_suffix("_ref") {
            let b = Self::from_name(base)?;
            return if b.is_ref() { None } else { Some(b.to_ref()) };
        }
        let alias = match s {
            "float32" => Some(DataType::FLOAT),
            "float64" => Some(DataType::DOUBLE),
            "float16" => Some(DataType::HALF),
            _ => None,
        };
        alias.or_else(|| {
            DATA_TYPES
                .iter()
                .skip(1)
                .find(|i| i.name == s)
                .map(|i| DataType(i.number))
        })
    }

    /// Parses a dtype the way a command-line user writes it: TensorFlow names and aliases,
    /// proto names (`DT_FLOAT`), numpy-style names (`f32`, `i8`, `u16`, `bf16`, `f16`, `f64`,
    /// `c64`, `c128`, `int`...) and numbers.
    pub fn parse_lenient(s: &str) -> Option<DataType> {
        let t = s.trim();
        if let Some(d) = Self::from_name(t) {
            return Some(d);
        }
        let lower = t.to_ascii_lowercase();
        if let Some(d) = Self::from_name(&lower) {
            return Some(d);
        }
        if let Some(rest) = lower.strip_prefix("dt_") {
            return Self::from_name(rest);
        }
        if let Ok(n) = t.parse::<i32>() {
            let d = DataType(n);
            return d.is_known().then_some(d);
        }
        Some(match lower.as_str() {
            "f32" => DataType::FLOAT,
            "f64" => DataType::DOUBLE,
            "f16" => DataType::HALF,
            "bf16" => DataType::BFLOAT16,
            "i8" => DataType::INT8,
            "i16" => DataType::INT16,
            "i32" | "int" => DataType::INT32,
            "i64" => DataType::INT64,
            "u8" => DataType::UINT8,
            "u16" => DataType::UINT16,
            "u32" => DataType::UINT32,
            "u64" => DataType::UINT64,
            "c64" => DataType::COMPLEX64,
            "c128" => DataType::COMPLEX128,
            "f8e4m3" | "f8_e4m3fn" | "float8_e4m3" => DataType::FLOAT8_E4M3FN,
            "f8e5m2" | "f8_e5m2" => DataType::FLOAT8_E5M2,
            _ => return None,
        })
    }

    /// `DataTypeSize`: bytes per element; 0 for string, resource, variant, invalid, every ref
    /// and unknown numbers.
    pub fn size(self) -> usize {
        self.info().map_or(0, |i| i.size)
    }

    /// `DataTypeCanUseMemcpy`: false for string, resource, variant, invalid, refs, unknown.
    pub fn can_use_memcpy(self) -> bool {
        self.info().is_some_and(|i| i.memcpy)
    }

    /// The kind of value it holds; `None` for `INVALID`, refs and unknown numbers.
    pub fn category(self) -> Option<Category> {
        self.info().and_then(|i| i.category)
    }

    /// In TensorFlow's `Bitcast` type list (every numeric type of 1..=23 but `bool`).
    pub fn is_bitcastable(self) -> bool {
        self.info().is_some_and(|i| i.bitcast)
    }

    /// Floating types: half, bfloat16, float, double, the float8 types and float4.
    pub fn is_floating(self) -> bool {
        matches!(self.category(), Some(Category::Float | Category::Minifloat))
    }

    /// Integer types: int2/4/8/16/32/64 and their unsigned twins (not the quantized types).
    pub fn is_integer(self) -> bool {
        matches!(self.category(), Some(Category::Int | Category::Uint))
    }

    /// Signed integer types.
    pub fn is_signed_integer(self) -> bool {
        self.category() == Some(Category::Int)
    }

    /// Unsigned integer types.
    pub fn is_unsigned_integer(self) -> bool {
        self.category() == Some(Category::Uint)
    }

    /// Quantized types: qint8, quint8, qint16, quint16, qint32.
    pub fn is_quantized(self) -> bool {
        self.category() == Some(Category::Quantized)
    }

    /// complex64 and complex128.
    pub fn is_complex(self) -> bool {
        self.category() == Some(Category::Complex)
    }

    /// Number of bits of one element's value (4 for int4, 2 for int2, `8 * size` otherwise;
    /// 0 for non-numeric types). Ascend TIK's `reinterpret_cast_to` factor uses storage bits,
    /// not these: see [`DataType::size`].
    pub fn value_bits(self) -> usize {
        match self.0 {
            29 | 30 | 33 => 4,
            31 | 32 => 2,
            _ => 8 * self.size(),
        }
    }

    /// For the sub-byte integers (int4, uint4, int2, uint2), the mask of the bits that hold the
    /// value in their one byte per element: `0x0f` or `0x03`; `None` for every other dtype.
    ///
    /// A sub-byte integer has one *canonical* byte per value: the value's low bits with the
    /// upper bits zero (what `Int4::new` and `ml_dtypes` store). Every tensorcast path that
    /// creates values stores that byte (constructors, proto decoding, cast), so equal values
    /// have equal bytes and survive a proto round trip byte for byte. Zero-copy views of
    /// foreign bytes (`bitcast_from`, `reinterpret_cast_to`, a shared `from_buffer`) keep the
    /// bytes they are given; tensor equality compares these dtypes by value, so such a tensor
    /// still equals its canonical copy.
    ///
    /// ```
    /// use tensorcast_core::DataType;
    /// assert_eq!(DataType::INT4.sub_byte_mask(), Some(0x0f));
    /// assert_eq!(DataType::UINT2.sub_byte_mask(), Some(0x03));
    /// assert_eq!(DataType::UINT8.sub_byte_mask(), None);
    /// ```
    pub fn sub_byte_mask(self) -> Option<u8> {
        match self.0 {
            29 | 30 => Some(0x0f),
            31 | 32 => Some(0x03),
            _ => None,
        }
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

impl fmt::Debug for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.proto_name() {
            Some(p) => f.write_str(&p),
            None => write!(f, "DataType({})", self.0),
        }
    }
}

impl std::str::FromStr for DataType {
    type Err = crate::Error;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse_lenient(s).ok_or_else(|| crate::Error::UnknownDtypeName {
            name: s.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_rows_are_in_number_order() {
        for (i, row) in DATA_TYPES.iter().enumerate() {
            assert_eq!(row.number as usize, i);
        }
        assert_eq!(DATA_TYPES.len(), 34);
    }

    #[test]
    fn dtypes_macro_reads_every_name_in_order() {
        const L: &[DataType] = crate::dtypes!("float,double , bool, float8_e4m3fn,  uint2");
        assert_eq!(
            L,
            [
                DataType::FLOAT,
                DataType::DOUBLE,
                DataType::BOOL,
                DataType::FLOAT8_E4M3FN,
                DataType::UINT2
            ]
        );
        for d in DataType::all() {
            let name = d.name();
            assert_eq!(parse_names::<1>(&name), [d], "{name}");
            assert_eq!(count_names(&format!("{name}, {name}")), 2);
        }
        let unknown = std::panic::catch_unwind(|| parse_names::<1>("floaty"));
        assert!(unknown.is_err());
    }

    #[test]
    fn names_round_trip_through_from_name() {
        for d in DataType::all() {
            assert_eq!(DataType::from_name(&d.name()), Some(d));
            assert_eq!(DataType::from_name(&d.to_ref().name()), Some(d.to_ref()));
        }
        assert_eq!(DataType::from_name("INVALID"), None);
        assert_eq!(DataType::from_name("float_ref_ref"), None);
        assert_eq!(DataType::from_name("float64"), Some(DataType::DOUBLE));
        assert_eq!(DataType::from_name("float32"), Some(DataType::FLOAT));
    }

    #[test]
    fn sizes_and_memcpy_follow_tensorflow() {
        assert_eq!(DataType::FLOAT.to_ref().size(), 0);
        assert_eq!(DataType::RESOURCE.size(), 0);
        assert_eq!(DataType::INT4.size(), 1);
        assert_eq!(DataType::FLOAT4_E2M1FN.size(), 1);
        assert!(DataType::BOOL.can_use_memcpy());
        assert!(!DataType::STRING.can_use_memcpy());
        assert!(!DataType::FLOAT_REF.can_use_memcpy());
        assert_eq!(DataType::from_number(99).size(), 0);
    }

    #[test]
    fn unknown_and_ref_names() {
        assert_eq!(DataType::from_number(50).name(), "unknown dtype enum (50)");
        // Every number above 100 is a ref to `number - 100` in TensorFlow's `DataTypeString`
        // (`IsRefType` is `dtype > kDataTypeRefOffset`), known or not: its C++ prints
        // `unknown dtype enum (27)_ref` for 127 where 27 was not yet a dtype (a TensorFlow 1.x
        // crash log shows that text). Python's `DType` refuses such numbers before naming them,
        // so the C++ rule is the one to follow; the odd-looking name is TensorFlow's.
        assert_eq!(
            DataType::from_number(i32::MAX).name(),
            "unknown dtype enum (2147483547)_ref"
        );
        assert_eq!(
            DataType::from_number(i32::MIN).name(),
            "unknown dtype enum (-2147483648)"
        );
        assert_eq!(DataType::from_number(i32::MAX).proto_name(), None);
        assert_eq!(DataType::from_number(133).name(), "float4_e2m1fn_ref");
        assert_eq!(
            DataType::FLOAT_REF.proto_name().as_deref(),
            Some("DT_FLOAT_REF")
        );
        assert_eq!(format!("{:?}", DataType::HALF), "DT_HALF");
    }

    #[test]
    fn lenient_parsing() {
        assert_eq!("bf16".parse::<DataType>().unwrap(), DataType::BFLOAT16);
        assert_eq!("DT_INT8".parse::<DataType>().unwrap(), DataType::INT8);
        assert_eq!("3".parse::<DataType>().unwrap(), DataType::INT32);
        assert!("nope".parse::<DataType>().is_err());
    }
}
