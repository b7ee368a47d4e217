//! Scalar references the tests and fuzz bodies check kernels against, written independently of
//! the kernels.

/// numpy's broadcasting rule for one element: the row-major index of the `input` element read
/// for element `flat` of `output` (the leading axes `input` lacks are dropped, and every size-1
/// input axis is read at 0). `input` must broadcast to `output`.
pub fn broadcast_source_index(input: &[i64], output: &[i64], mut flat: usize) -> usize {
    let lead = output.len() - input.len();
    let mut idx = vec![0usize; output.len()];
    for d in (0..output.len()).rev() {
        let size = output[d] as usize;
        idx[d] = flat % size;
        flat /= size;
    }
    input.iter().enumerate().fold(0, |pos, (k, &size)| {
        let j = if size == 1 { 0 } else { idx[lead + k] };
        pos * size as usize + j
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_columns_and_missing_axes_read_the_right_element() {
        // [3] -> [2, 3]: the row repeats.
        let row: Vec<usize> = (0..6)
            .map(|i| broadcast_source_index(&[3], &[2, 3], i))
            .collect();
        assert_eq!(row, [0, 1, 2, 0, 1, 2]);
        // [2, 1] -> [2, 3]: the column repeats.
        let col: Vec<usize> = (0..6)
            .map(|i| broadcast_source_index(&[2, 1], &[2, 3], i))
            .collect();
        assert_eq!(col, [0, 0, 0, 1, 1, 1]);
        // [] -> [2, 2]: the scalar everywhere.
        assert!((0..4).all(|i| broadcast_source_index(&[], &[2, 2], i) == 0));
    }
}
