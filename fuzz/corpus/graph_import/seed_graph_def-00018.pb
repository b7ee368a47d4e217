
2
xPlaceholder*
dtype0*
shape
:
.
yPlaceholder*
dtype0*
shape:
:
eqEqualxy*
T0*
incompatible_shape_error(
=
neNotEqualxy*
T0*
incompatible_shape_error("ª