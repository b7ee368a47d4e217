
.
aPlaceholder*
dtype0*
shape:
.
bPlaceholder*
dtype0*
shape:

dSubab*
T0

sqMuldd*
T0"ª