//! [`dispatch!`](crate::dispatch): run generic code on the Rust element type of a runtime
//! [`DataType`](crate::DataType), generated from the dtype table.

/// Runs an expression with a type alias bound to the Rust element type of a runtime dtype.
///
/// `dispatch!(dtype, T => expr, _ => fallback)` evaluates `expr` with `T` naming the element
/// type of `dtype` (`f32` for `DataType::FLOAT`, [`bf16`](crate::bf16) for
/// `DataType::BFLOAT16`, [`TString`](crate::TString) for `DataType::STRING`, ...), and
/// `fallback` for a dtype the selection does not cover (`INVALID`, refs, unknown numbers, or a
/// category left out). Every arm comes from the dtype table, so a dtype added there is
/// dispatched everywhere.
///
/// Ops accept subsets of the dtypes: name the categories in brackets before `T` (any of
/// `float`, `minifloat`, `int`, `uint`, `complex`, `quantized`, `bool`, `object`; see
/// [`Category`](crate::dtype::Category)), or list the dtypes' constant names in braces
/// (`{INT8, INT16, FLOAT8_E5M2}`) where an op's type list cuts across categories. Either way
/// the element type comes from the table.
///
/// `expr` may use `?` and `return` (they act on the enclosing function); all arms must have
/// the fallback's type.
///
/// ```
/// use tensorcast_core::{dispatch, DataType, Element};
///
/// fn size_of_element(dtype: DataType) -> Option<usize> {
///     dispatch!(dtype, T => Some(std::mem::size_of::<T>()), _ => None)
/// }
/// assert_eq!(size_of_element(DataType::BFLOAT16), Some(2));
/// assert_eq!(size_of_element(DataType::INVALID), None);
///
/// fn is_numeric(dtype: DataType) -> bool {
///     dispatch!(dtype, [float, int, uint, complex] T => T::IS_POD, _ => false)
/// }
/// assert!(is_numeric(DataType::INT8));
/// assert!(!is_numeric(DataType::QINT8));
/// assert!(!is_numeric(DataType::STRING));
///
/// fn wrapping_double(dtype: DataType, x: i64) -> Option<i64> {
///     // Sub-byte integers are `int`s too: a brace list names exactly the dtypes wanted.
///     dispatch!(dtype, {INT8, INT16, INT32, INT64} T => Some(i64::from((x as T).wrapping_mul(2))), _ => None)
/// }
/// assert_eq!(wrapping_double(DataType::INT8, 100), Some(-56));
/// assert_eq!(wrapping_double(DataType::INT4, 1), None);
/// ```
#[macro_export]
macro_rules! dispatch {
    ($dtype:expr, $T:ident => $body:expr, _ => $fallback:expr $(,)?) => {
        $crate::dispatch!(
            $dtype,
            [float, minifloat, int, uint, complex, quantized, bool, object] $T => $body,
            _ => $fallback
        )
    };
    ($dtype:expr, {$($konst:ident),+ $(,)?} $T:ident => $body:expr, _ => $fallback:expr $(,)?) => {
        'dispatch: {
            let dtype: $crate::DataType = $dtype;
            $(
                if dtype == $crate::DataType::$konst {
                    #[allow(dead_code, reason = "the body need not name the element type")]
                    type $T = <$crate::__DtypeNumber<{ $crate::DataType::$konst.number() }>
                        as $crate::__ElementOf>::Element;
                    break 'dispatch ($body);
                }
            )+
            $fallback
        }
    };
    ($dtype:expr, [$($cat:ident),+ $(,)?] $T:ident => $body:expr, _ => $fallback:expr $(,)?) => {
        'dispatch: {
            let dtype: $crate::DataType = $dtype;
            $crate::__dtype_table!($crate::__dispatch_rows, ([$($cat),+] dtype 'dispatch $T ($body)));
            $fallback
        }
    };
}

/// A dtype's proto number as a type: [`ElementOf`] maps it to the dtype's element type, which
/// is how [`dispatch!`]'s brace form names the type of a listed constant.
#[doc(hidden)]
#[derive(Debug)]
pub struct Number<const N: i32>;

/// The element type of the dtype numbered `N` (implemented for every row of the table).
#[doc(hidden)]
pub trait ElementOf {
    /// The Rust element type.
    type Element: crate::Element;
}

macro_rules! element_of_rows {
    (; $( $konst:ident = $num:literal, $name:literal, $size:expr, $cat:ident, $bitcast:literal, $ty:ty; )*) => {
        $( impl ElementOf for Number<$num> { type Element = $ty; } )*
    };
}

crate::__dtype_table!(element_of_rows);

/// The arms of [`dispatch!`]: one `if` per table row whose category is selected.
#[doc(hidden)]
#[macro_export]
macro_rules! __dispatch_rows {
    ($args:tt ; $( $konst:ident = $num:literal, $name:literal, $size:expr, $cat:ident, $bitcast:literal, $ty:ty; )*) => {
        $( $crate::__dispatch_row!($args, $cat, $konst, $ty); )*
    };
}

/// One row of [`dispatch!`]: walks the selected categories, emitting the arm on a match.
#[doc(hidden)]
#[macro_export]
macro_rules! __dispatch_row {
    (([] $($rest:tt)*), $row_cat:ident, $konst:ident, $ty:ty) => {};
    (([$want:ident $(, $more:ident)*] $d:ident $label:lifetime $T:ident $body:tt), $row_cat:ident, $konst:ident, $ty:ty) => {
        $crate::__dispatch_if!($want, $row_cat, $d, $label, $T, $body, $konst, $ty);
        $crate::__dispatch_row!(([$($more),*] $d $label $T $body), $row_cat, $konst, $ty);
    };
}

/// Emits `if dtype == CONST { type T = ..; break 'dispatch body }` when the two categories
/// are the same word.
#[doc(hidden)]
#[macro_export]
macro_rules! __dispatch_if {
    (float, float, $($arm:tt)*) => { $crate::__dispatch_arm!($($arm)*); };
    (minifloat, minifloat, $($arm:tt)*) => { $crate::__dispatch_arm!($($arm)*); };
    (int, int, $($arm:tt)*) => { $crate::__dispatch_arm!($($arm)*); };
    (uint, uint, $($arm:tt)*) => { $crate::__dispatch_arm!($($arm)*); };
    (complex, complex, $($arm:tt)*) => { $crate::__dispatch_arm!($($arm)*); };
    (quantized, quantized, $($arm:tt)*) => { $crate::__dispatch_arm!($($arm)*); };
    (bool, bool, $($arm:tt)*) => { $crate::__dispatch_arm!($($arm)*); };
    (object, object, $($arm:tt)*) => { $crate::__dispatch_arm!($($arm)*); };
    ($want:ident, $row_cat:ident, $($arm:tt)*) => {};
}

#[doc(hidden)]
#[macro_export]
macro_rules! __dispatch_arm {
    ($d:ident, $label:lifetime, $T:ident, $body:tt, $konst:ident, $ty:ty) => {
        if $d == $crate::DataType::$konst {
            #[allow(dead_code, reason = "the body need not name the element type")]
            type $T = $ty;
            break $label $body;
        }
    };
}

#[cfg(test)]
mod tests {
    use crate::{DataType, Element};

    fn dtype_of(d: DataType) -> Option<DataType> {
        dispatch!(d, T => Some(T::DTYPE), _ => None)
    }

    #[test]
    fn every_table_dtype_dispatches_to_its_element_type() {
        for d in DataType::all() {
            assert_eq!(dtype_of(d), Some(d), "{d}");
        }
        assert_eq!(dtype_of(DataType::INVALID), None);
        assert_eq!(dtype_of(DataType::FLOAT_REF), None);
        assert_eq!(dtype_of(DataType::from_number(77)), None);
    }

    #[test]
    fn category_subsets_select_only_their_rows() {
        for d in DataType::all() {
            let got: Option<DataType> = dispatch!(d, [int, uint] T => Some(T::DTYPE), _ => None);
            assert_eq!(got.is_some(), d.is_integer(), "{d}");
        }
    }

    #[test]
    fn brace_lists_select_exactly_the_named_dtypes() {
        for d in DataType::all() {
            let got: Option<DataType> =
                dispatch!(d, {BFLOAT16, INT4, STRING} T => Some(T::DTYPE), _ => None);
            let want = [DataType::BFLOAT16, DataType::INT4, DataType::STRING].contains(&d);
            assert_eq!(got, want.then_some(d), "{d}");
        }
    }

    #[test]
    fn body_can_use_question_mark() {
        fn first(t: &crate::Tensor) -> crate::Result<String> {
            dispatch!(t.dtype(), [float] T => Ok(format!("{:?}", t.flat::<T>()?[0])), _ => Ok(String::new()))
        }
        assert_eq!(first(&crate::Tensor::vector(&[1.5f32])).unwrap(), "1.5");
        assert_eq!(first(&crate::Tensor::vector(&[1i32])).unwrap(), "");
    }
}
