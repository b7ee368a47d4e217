
.
xPlaceholder*
dtype0*
shape:
;
yPlaceholder*
dtype0*
shape:ÿÿÿÿÿÿÿÿÿ
4
sShapey*
T0*
out_type0:íÏ
+
bBroadcastToxs*

Tidx0*
T0

outMulby*
T0"ª