//! Fuzz target body for the TensorList ops (`TensorListReserve`, `TensorListFromTensor`,
//! `TensorListSetItem`, `TensorListGetItem`, `TensorListStack`, `TensorListLength`,
//! `TensorListElementShape`) run in a graph session: a list made by `Reserve` (element counts
//! and element shapes mostly small, sometimes extreme: 2^31-1, dims of 2^20), by `FromTensor`,
//! or fed as an encoded `tensorflow::TensorList` variant whose metadata are the input's bytes;
//! then a chain of `SetItem`s (indices mostly small, sometimes huge, with or without resizing)
//! and every reading op at its end.
//!
//! Input layout (missing bytes read as 0): the source byte (`% 3`: reserve, from-tensor, fed),
//! the element shape (a byte: `< 32` unknown rank, else a rank `% 4` and that many dims, each
//! a byte: `>= 250` an extreme dim, `== 0` -1, else `% 4`), the source's values (reserve: the
//! count, a byte `>= 248` an extreme one, else `% 8`; from-tensor: a leading dim `% 5`; fed:
//! a length byte and that many metadata bytes, then `% 4` nested float scalars), the number of
//! `SetItem`s (`% 4`), each an index (as reserve's count), an item rank (`% 3`, dims `% 3`),
//! the resize flag and an element-dtype byte (`% 8 == 0`: int32 instead of float); then a
//! reading op's `num_elements` attr byte.
//!
//! Every run must return `Ok` or `Err`, never panic, abort or allocate beyond the session's
//! limit (run with `-malloc_limit_mb`); when both `TensorListLength` and `TensorListStack`
//! succeed, the stack has as many rows as the list has elements.

use bytes::Bytes;
use tensorcast_core::{DataType, Tensor, TensorShape, Variant, VariantTensorData};
use tensorcast_graph::{import_graph_def, Graph, Session, SessionOptions};
use tensorcast_proto::{AttrValue, NodeDef};

use super::reader::Reader;
use crate::graph_defs::{const_of, graph_def, node};

/// The most a run may allocate beyond its kernels' inputs (the fuzzer's malloc limit is
/// 512 MB).
const LIMIT_BYTES: u64 = 64 << 20;

const EXTREME_COUNTS: [i32; 6] = [i32::MAX, i32::MAX - 1, 1 << 30, 1 << 24, i32::MIN, -1];
const EXTREME_DIMS: [i32; 6] = [1 << 20, 1 << 30, i32::MAX, 65536, -2, i32::MIN];

impl Reader<'_> {
    /// A count or index: mostly in [-1, 7), sometimes extreme.
    fn list_count(&mut self) -> i32 {
        let b = self.byte();
        if b >= 248 {
            EXTREME_COUNTS[usize::from(b - 248) % EXTREME_COUNTS.len()]
        } else {
            i32::from(b % 8) - 1
        }
    }

    /// An `element_shape` input: the scalar -1 (unknown rank) or a vector of dims.
    fn element_shape(&mut self) -> Tensor {
        let b = self.byte();
        if b < 32 {
            return Tensor::scalar_of(-1i32);
        }
        let dims: Vec<i32> = (0..b % 4)
            .map(|_| match self.byte() {
                0 => -1,
                x if x >= 250 => EXTREME_DIMS[usize::from(x - 250) % EXTREME_DIMS.len()],
                x => i32::from(x % 4),
            })
            .collect();
        Tensor::vector(&dims)
    }
}

fn attrs(dtype: i32, extra: &[(&str, AttrValue)]) -> Vec<(String, AttrValue)> {
    let mut v = vec![("element_dtype".to_string(), AttrValue::of_type(dtype))];
    v.extend(extra.iter().map(|(k, a)| (k.to_string(), a.clone())));
    v
}

fn list_node(name: &str, op: &str, inputs: &[&str], a: Vec<(String, AttrValue)>) -> NodeDef {
    let mut n = node(name, op, inputs, &[]);
    n.attr.extend(a);
    n
}

/// Runs one input.
pub fn run(data: &[u8]) {
    let mut r = Reader::new(data);
    let source = r.byte() % 3;
    let element_shape = r.element_shape();
    let mut nodes = vec![const_of("element_shape", &element_shape)];
    let mut feeds: Vec<(&str, Tensor)> = Vec::new();
    let float = DataType::FLOAT.number();
    match source {
        0 => {
            nodes.push(const_of("n", &Tensor::scalar_of(r.list_count())));
            nodes.push(list_node(
                "l0",
                "TensorListReserve",
                &["element_shape", "n"],
                attrs(float, &[("shape_type", AttrValue::of_type(3))]),
            ));
        }
        1 => {
            let d0 = i64::from(r.byte() % 5);
            let t = Tensor::from_vec(
                (0..d0 * 2).map(|i| i as f32).collect::<Vec<_>>(),
                TensorShape::new(&[d0, 2]).unwrap_or_default(),
            )
            .unwrap_or_else(|_| Tensor::vector(&[0.0f32]));
            nodes.push(const_of("t", &t));
            nodes.push(list_node(
                "l0",
                "TensorListFromTensor",
                &["t", "element_shape"],
                attrs(float, &[("shape_type", AttrValue::of_type(3))]),
            ));
        }
        _ => {
            let len = usize::from(r.byte());
            let metadata: Vec<u8> = (0..len).map(|_| r.byte()).collect();
            let tensors = (0..r.byte() % 4)
                .map(|i| Tensor::scalar_of(f32::from(i)))
                .collect();
            let v = Variant::Encoded(VariantTensorData {
                type_name: "tensorflow::TensorList".into(),
                metadata: Bytes::from(metadata),
                tensors,
            });
            feeds.push(("l0", Tensor::scalar_of(v)));
            nodes.push(node(
                "l0",
                "Placeholder",
                &[],
                &[("dtype", AttrValue::of_type(DataType::VARIANT.number()))],
            ));
        }
    }
    let mut last = "l0".to_string();
    for k in 0..r.byte() % 4 {
        let index = r.list_count();
        let rank = r.byte() % 3;
        let dims: Vec<i64> = (0..rank).map(|_| i64::from(r.byte() % 3)).collect();
        let resize = r.byte() % 2 == 1;
        let item_dtype = if r.byte().is_multiple_of(8) {
            DataType::INT32
        } else {
            DataType::FLOAT
        };
        let shape = TensorShape::new(&dims).unwrap_or_default();
        let n = shape.num_elements() as usize;
        let item = if item_dtype == DataType::INT32 {
            Tensor::from_vec(vec![1i32; n], &shape)
        } else {
            Tensor::from_vec(vec![1.0f32; n], &shape)
        }
        .unwrap_or_else(|_| Tensor::scalar_of(1.0f32));
        let (idx, it, set) = (format!("i{k}"), format!("x{k}"), format!("l{}", k + 1));
        nodes.push(const_of(&idx, &Tensor::scalar_of(index)));
        nodes.push(const_of(&it, &item));
        nodes.push(list_node(
            &set,
            "TensorListSetItem",
            &[&last, &idx, &it],
            attrs(
                item.dtype().number(),
                &[("resize_if_index_out_of_bounds", AttrValue::of_bool(resize))],
            ),
        ));
        last = set;
    }
    let num_elements = match r.byte() % 4 {
        0 => i64::from(r.list_count()),
        _ => -1,
    };
    let zero = const_of("zero", &Tensor::scalar_of(r.list_count()));
    nodes.push(zero);
    nodes.push(list_node(
        "stack",
        "TensorListStack",
        &[&last, "element_shape"],
        attrs(float, &[("num_elements", AttrValue::of_int(num_elements))]),
    ));
    nodes.push(list_node(
        "get",
        "TensorListGetItem",
        &[&last, "zero", "element_shape"],
        attrs(float, &[]),
    ));
    nodes.push(node("len", "TensorListLength", &[&last], &[]));
    nodes.push(node(
        "shape",
        "TensorListElementShape",
        &[&last],
        &[("shape_type", AttrValue::of_type(3))],
    ));
    let g = Graph::new();
    if import_graph_def(&g, &graph_def(nodes)).is_err() {
        return;
    }
    let options = SessionOptions {
        max_allocation_bytes: LIMIT_BYTES,
        max_constant_bytes: LIMIT_BYTES,
        ..SessionOptions::default()
    };
    let session = Session::with_options(&g, options);
    let one = |fetch: &str| session.run(&feeds, &[fetch], &[]).ok();
    let len = one("len");
    let stack = one("stack");
    let _ = one("get");
    let _ = one("shape");
    let _ = one(&last);
    if let (Some(len), Some(stack)) = (len, stack) {
        let n = i64::from(len[0].as_slice::<i32>().expect("a length is int32")[0]);
        assert_eq!(
            stack[0].shape().dim_sizes().first().copied(),
            Some(n),
            "the stack of a list of {n} elements"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extreme_reserve_set_and_fed_lists_are_errors() {
        // Reserve 2^31-1 elements, reserve 3 then set index 2^31-1 with resizing, a fed list
        // claiming 200 unset elements in 2 bytes, and a small list that works.
        run(&[0, 40, 1, 248]);
        run(&[0, 40, 1, 3, 1, 248, 0, 1, 1]);
        run(&[2, 0, 2, 200, 1, 0]);
        run(&[0, 40, 1, 4, 1, 2, 0, 0, 1, 1]);
    }
}
