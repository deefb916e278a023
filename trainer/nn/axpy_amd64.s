//go:build !purego

#include "textflag.h"

// func cpuHasAVX() bool
// CPUID.1:ECX bits 27 (OSXSAVE) and 28 (AVX), then XCR0 bits 1 and 2 (the OS saves XMM and YMM).
TEXT ·cpuHasAVX(SB), NOSPLIT, $0-1
	MOVL $1, AX
	XORL CX, CX
	CPUID
	ANDL $0x18000000, CX
	CMPL CX, $0x18000000
	JNE  no
	XORL CX, CX
	XGETBV
	ANDL $6, AX
	CMPL AX, $6
	JNE  no
	MOVB $1, ret+0(FP)
	RET

no:
	MOVB $0, ret+0(FP)
	RET

// func axpyAVX(alpha float64, x, y []float64)
// y[i] += x[i]·alpha, as a separate multiply and add (no FMA: the same rounding as gonum's SSE2
// kernel), sixteen elements per iteration, then four, then one.
TEXT ·axpyAVX(SB), NOSPLIT, $0-56
	MOVQ         x_base+8(FP), SI
	MOVQ         x_len+16(FP), CX
	MOVQ         y_base+32(FP), DI
	VBROADCASTSD alpha+0(FP), Y0
	XORQ         AX, AX
	MOVQ         CX, DX
	ANDQ         $-16, DX
	JZ           quad

loop16:
	VMULPD  (SI)(AX*8), Y0, Y1
	VMULPD  32(SI)(AX*8), Y0, Y2
	VMULPD  64(SI)(AX*8), Y0, Y3
	VMULPD  96(SI)(AX*8), Y0, Y4
	VADDPD  (DI)(AX*8), Y1, Y1
	VADDPD  32(DI)(AX*8), Y2, Y2
	VADDPD  64(DI)(AX*8), Y3, Y3
	VADDPD  96(DI)(AX*8), Y4, Y4
	VMOVUPD Y1, (DI)(AX*8)
	VMOVUPD Y2, 32(DI)(AX*8)
	VMOVUPD Y3, 64(DI)(AX*8)
	VMOVUPD Y4, 96(DI)(AX*8)
	ADDQ    $16, AX
	CMPQ    AX, DX
	JL      loop16

quad:
	MOVQ CX, DX
	ANDQ $-4, DX
	CMPQ AX, DX
	JGE  single

loop4:
	VMULPD  (SI)(AX*8), Y0, Y1
	VADDPD  (DI)(AX*8), Y1, Y1
	VMOVUPD Y1, (DI)(AX*8)
	ADDQ    $4, AX
	CMPQ    AX, DX
	JL      loop4

single:
	CMPQ AX, CX
	JGE  done

loop1:
	VMULSD (SI)(AX*8), X0, X1
	VADDSD (DI)(AX*8), X1, X1
	VMOVSD X1, (DI)(AX*8)
	INCQ   AX
	CMPQ   AX, CX
	JL     loop1

done:
	VZEROUPPER
	RET

// func axpy4AVX(a *[4]float64, x0, x1, x2, x3, y []float64)
// y[i] = (((y[i] + x0[i]·a[0]) + x1[i]·a[1]) + x2[i]·a[2]) + x3[i]·a[3]: four axpys in one pass,
// each product and sum rounded on its own, so the bits are those of four axpy calls in turn, with
// y loaded and stored once instead of four times. Eight elements per iteration, then four, then one.
TEXT ·axpy4AVX(SB), NOSPLIT, $0-128
	MOVQ         a+0(FP), AX
	VBROADCASTSD 0(AX), Y0
	VBROADCASTSD 8(AX), Y1
	VBROADCASTSD 16(AX), Y2
	VBROADCASTSD 24(AX), Y3
	MOVQ         x0_base+8(FP), R8
	MOVQ         x1_base+32(FP), R9
	MOVQ         x2_base+56(FP), R10
	MOVQ         x3_base+80(FP), R11
	MOVQ         y_base+104(FP), DI
	MOVQ         y_len+112(FP), CX
	XORQ         AX, AX
	MOVQ         CX, DX
	ANDQ         $-8, DX
	JZ           quad4

loop8:
	VMOVUPD (DI)(AX*8), Y4
	VMOVUPD 32(DI)(AX*8), Y5
	VMULPD  (R8)(AX*8), Y0, Y6
	VMULPD  32(R8)(AX*8), Y0, Y7
	VADDPD  Y6, Y4, Y4
	VADDPD  Y7, Y5, Y5
	VMULPD  (R9)(AX*8), Y1, Y6
	VMULPD  32(R9)(AX*8), Y1, Y7
	VADDPD  Y6, Y4, Y4
	VADDPD  Y7, Y5, Y5
	VMULPD  (R10)(AX*8), Y2, Y6
	VMULPD  32(R10)(AX*8), Y2, Y7
	VADDPD  Y6, Y4, Y4
	VADDPD  Y7, Y5, Y5
	VMULPD  (R11)(AX*8), Y3, Y6
	VMULPD  32(R11)(AX*8), Y3, Y7
	VADDPD  Y6, Y4, Y4
	VADDPD  Y7, Y5, Y5
	VMOVUPD Y4, (DI)(AX*8)
	VMOVUPD Y5, 32(DI)(AX*8)
	ADDQ    $8, AX
	CMPQ    AX, DX
	JL      loop8

quad4:
	MOVQ CX, DX
	ANDQ $-4, DX
	CMPQ AX, DX
	JGE  single4
	VMOVUPD (DI)(AX*8), Y4
	VMULPD  (R8)(AX*8), Y0, Y6
	VADDPD  Y6, Y4, Y4
	VMULPD  (R9)(AX*8), Y1, Y6
	VADDPD  Y6, Y4, Y4
	VMULPD  (R10)(AX*8), Y2, Y6
	VADDPD  Y6, Y4, Y4
	VMULPD  (R11)(AX*8), Y3, Y6
	VADDPD  Y6, Y4, Y4
	VMOVUPD Y4, (DI)(AX*8)
	ADDQ    $4, AX

single4:
	CMPQ AX, CX
	JGE  done4

loop1:
	VMOVSD (DI)(AX*8), X4
	VMULSD (R8)(AX*8), X0, X6
	VADDSD X6, X4, X4
	VMULSD (R9)(AX*8), X1, X6
	VADDSD X6, X4, X4
	VMULSD (R10)(AX*8), X2, X6
	VADDSD X6, X4, X4
	VMULSD (R11)(AX*8), X3, X6
	VADDSD X6, X4, X4
	VMOVSD X4, (DI)(AX*8)
	INCQ   AX
	CMPQ   AX, CX
	JL     loop1

done4:
	VZEROUPPER
	RET

// func dot4AVX(x, y0, y1, y2, y3 []float64, out *[4]float64)
// out[j] = Σ x[i]·y_j[i] for i < len(x), summed exactly as gonum's DotUnitary sums one dot product:
// four lanes (element i goes to lane i mod 4) over the whole multiples of four, the remaining
// elements added to lane 0 in order, then (lane 0 + lane 2) + (lane 1 + lane 3). Four independent
// chains of additions instead of one keep the adders busy; the bits stay DotUnitary's.
TEXT ·dot4AVX(SB), NOSPLIT, $0-128
	MOVQ   x_base+0(FP), SI
	MOVQ   x_len+8(FP), CX
	MOVQ   y0_base+24(FP), R8
	MOVQ   y1_base+48(FP), R9
	MOVQ   y2_base+72(FP), R10
	MOVQ   y3_base+96(FP), R11
	MOVQ   out+120(FP), DI
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	XORQ   AX, AX
	MOVQ   CX, DX
	ANDQ   $-4, DX
	JZ     split

dloop:
	VMOVUPD (SI)(AX*8), Y4
	VMULPD  (R8)(AX*8), Y4, Y5
	VMULPD  (R9)(AX*8), Y4, Y6
	VMULPD  (R10)(AX*8), Y4, Y7
	VMULPD  (R11)(AX*8), Y4, Y8
	VADDPD  Y5, Y0, Y0
	VADDPD  Y6, Y1, Y1
	VADDPD  Y7, Y2, Y2
	VADDPD  Y8, Y3, Y3
	ADDQ    $4, AX
	CMPQ    AX, DX
	JL      dloop

split:
	// Lanes 2 and 3 aside: the scalar additions below clear the upper half of their register.
	VEXTRACTF128 $1, Y0, X9
	VEXTRACTF128 $1, Y1, X10
	VEXTRACTF128 $1, Y2, X11
	VEXTRACTF128 $1, Y3, X12
	CMPQ         AX, CX
	JGE          reduce

dtail:
	VMOVSD (SI)(AX*8), X4
	VMULSD (R8)(AX*8), X4, X5
	VADDSD X5, X0, X0
	VMULSD (R9)(AX*8), X4, X6
	VADDSD X6, X1, X1
	VMULSD (R10)(AX*8), X4, X7
	VADDSD X7, X2, X2
	VMULSD (R11)(AX*8), X4, X8
	VADDSD X8, X3, X3
	INCQ   AX
	CMPQ   AX, CX
	JL     dtail

reduce:
	VADDPD    X9, X0, X0
	VUNPCKHPD X0, X0, X4
	VADDSD    X4, X0, X0
	VMOVSD    X0, 0(DI)
	VADDPD    X10, X1, X1
	VUNPCKHPD X1, X1, X4
	VADDSD    X4, X1, X1
	VMOVSD    X1, 8(DI)
	VADDPD    X11, X2, X2
	VUNPCKHPD X2, X2, X4
	VADDSD    X4, X2, X2
	VMOVSD    X2, 16(DI)
	VADDPD    X12, X3, X3
	VUNPCKHPD X3, X3, X4
	VADDSD    X4, X3, X3
	VMOVSD    X3, 24(DI)
	VZEROUPPER
	RET
