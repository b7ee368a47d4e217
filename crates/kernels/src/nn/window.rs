//! Sliding-window geometry shared by the convolutions and the pools: TensorFlow's output
//! sizes and paddings (`GetWindowedOutputSizeVerbose`), its attribute checks and texts.

use tensorcast_core::{Error, Result};

/// TensorFlow's `padding` attr.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Padding {
    /// No padding: windows lie inside the input.
    Valid,
    /// Output size `ceil(in / stride)`, the padding split with the smaller half first.
    Same,
    /// The `explicit_paddings` attr's before/after amounts (convolutions only).
    Explicit,
}

impl Padding {
    /// Parses TensorFlow's spelling (`"SAME"`, `"VALID"`, `"EXPLICIT"`).
    pub fn from_name(s: &str) -> Option<Self> {
        match s {
            "VALID" => Some(Padding::Valid),
            "SAME" => Some(Padding::Same),
            "EXPLICIT" => Some(Padding::Explicit),
            _ => None,
        }
    }
}

/// One spatial axis of a window: output size and the padding before the first element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Axis {
    pub(crate) input: usize,
    pub(crate) output: usize,
    pub(crate) window: usize,
    pub(crate) stride: usize,
    pub(crate) dilation: usize,
    pub(crate) pad_before: usize,
}

/// One spatial axis of a sliding window as its op's attrs give it, unchecked: the window's
/// size, its dilation and stride, the padding, and for [`Padding::Explicit`] the amounts
/// before and after.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AxisAttrs {
    pub(crate) window: i64,
    pub(crate) dilation: i64,
    pub(crate) stride: i64,
    pub(crate) padding: Padding,
    pub(crate) explicit: (i64, i64),
}

impl AxisAttrs {
    /// A pool's: no dilation, no explicit padding.
    pub(crate) fn pool(window: i64, stride: i64, padding: Padding) -> Self {
        Self {
            window,
            dilation: 1,
            stride,
            padding,
            explicit: (0, 0),
        }
    }

    /// The span of input elements the window covers, dilation included.
    fn effective_window(self) -> i64 {
        (self.window - 1) * self.dilation + 1
    }

    /// The output size along an axis of `input` elements: TensorFlow's formula for each
    /// padding.
    fn output_size(self, input: i64) -> i64 {
        let (eff, stride, explicit) = (self.effective_window(), self.stride, self.explicit);
        match self.padding {
            Padding::Valid => (input - eff + stride) / stride,
            Padding::Same => (input + stride - 1) / stride,
            Padding::Explicit => (input + explicit.0 + explicit.1 - eff + stride) / stride,
        }
    }
}

/// TensorFlow's `GetWindowedOutputSizeVerbose`, of an axis of `input` elements and the
/// [`AxisAttrs`] given one by one.
pub(crate) fn axis(
    op: &'static str,
    input: i64,
    window: i64,
    dilation: i64,
    stride: i64,
    padding: Padding,
    explicit: (i64, i64),
) -> Result<Axis> {
    let attrs = AxisAttrs {
        window,
        dilation,
        stride,
        padding,
        explicit,
    };
    let eff = attrs.effective_window();
    let out = attrs.output_size(input);
    let before = match padding {
        Padding::Valid => 0,
        Padding::Same => ((out - 1) * stride + eff - input).max(0) / 2,
        Padding::Explicit => explicit.0,
    };
    if out < 0 {
        return Err(Error::invalid_argument(
            op,
            format!(
                "Computed output size would be negative: {out} [input_size: {input}, \
                 effective_filter_size: {eff}, stride: {stride}]"
            ),
        ));
    }
    Ok(Axis {
        input: input as usize,
        output: out.max(0) as usize,
        window: window as usize,
        stride: stride as usize,
        dilation: dilation as usize,
        pad_before: before.max(0) as usize,
    })
}

impl Axis {
    /// The input index the `k`th tap of output `o` reads, or `None` in the padding.
    #[inline]
    pub(crate) fn source(&self, o: usize, k: usize) -> Option<usize> {
        (o * self.stride + k * self.dilation)
            .checked_sub(self.pad_before)
            .filter(|&i| i < self.input)
    }
}

/// A shape function's output dim along an axis of `input` elements
/// (`GetWindowedOutputSizeFromDimsV2`): unknown input gives unknown output.
pub(crate) fn axis_shape(input: i64, attrs: AxisAttrs) -> Result<i64> {
    let AxisAttrs {
        window,
        dilation,
        stride,
        padding,
        explicit,
    } = attrs;
    if stride <= 0 {
        return Err(Error::invalid_argument(
            "shape",
            format!("Stride must be > 0, but got {stride}"),
        ));
    }
    if dilation < 1 {
        return Err(Error::invalid_argument(
            "shape",
            format!("Dilation rate must be >= 1, but got {dilation}"),
        ));
    }
    if input < 0 || window < 0 {
        return Ok(-1);
    }
    let eff = attrs.effective_window();
    // SAME never runs short; the others do when the (padded) input is shorter than the window.
    let padded = match padding {
        Padding::Valid => Some(input),
        Padding::Same => None,
        Padding::Explicit => Some(input + explicit.0 + explicit.1),
    };
    if let Some(padded) = padded.filter(|&p| p < eff) {
        return Err(Error::invalid_argument(
            "shape",
            format!("Negative dimension size caused by subtracting {eff} from {padded}"),
        ));
    }
    Ok(attrs.output_size(input))
}
