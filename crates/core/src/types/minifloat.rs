//! Placeholder until the minifloat module lands: the storage types only.
#![allow(missing_docs)]
macro_rules! byte_types { ($($n:ident($t:ty);)*) => {$(
    #[repr(transparent)]
    #[derive(Clone, Copy, Default, PartialEq, Eq, Hash, Debug, bytemuck::Pod, bytemuck::Zeroable)]
    pub struct $n(pub $t);
)*}}
byte_types! { Float8E5M2(u8); Float8E4M3FN(u8); Float8E4M3FNUZ(u8); Float8E4M3B11FNUZ(u8); Float8E5M2FNUZ(u8); Float4E2M1FN(u8); Int4(i8); UInt4(u8); Int2(i8); UInt2(u8); }
macro_rules! tmp_f { ($($n:ident),*) => {$( impl From<$n> for f32 { fn from(v: $n) -> f32 { v.0 as f32 } } )*} }
tmp_f!(
    Float8E5M2,
    Float8E4M3FN,
    Float8E4M3FNUZ,
    Float8E4M3B11FNUZ,
    Float8E5M2FNUZ,
    Float4E2M1FN
);
macro_rules! tmp_v { ($($n:ident),*) => {$( impl $n { pub fn value(self) -> i32 { self.0 as i32 } } )*} }
tmp_v!(Int4, UInt4, Int2, UInt2);
