
.
xPlaceholder*
dtype0*
shape:

iIdentityx*
T0

twiceAddV2ii*
T0"ª