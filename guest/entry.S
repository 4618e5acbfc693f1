/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Guest entry, exception stubs and the machine-check-safe memory routines.
 * The VMM starts every vCPU here in 64-bit mode with rdi = vCPU id and
 * rsi = boot info GPA.
 */
#define STACK_SIZE 16384

	.section .text.entry, "ax"
	.globl _start
_start:
	/* stack = stacks + (id + 1) * STACK_SIZE */
	lea	stacks(%rip), %rsp
	mov	%rdi, %rax
	inc	%rax
	shl	$14, %rax
	add	%rax, %rsp
	/* GS base -> this vCPU's per-cpu block, so C can find its id. */
	lea	percpu(%rip), %rax
	mov	%rdi, %rdx
	shl	$6, %rdx
	add	%rdx, %rax
	mov	%rdi, (%rax)
	mov	%rax, %rdx
	shr	$32, %rdx
	mov	$0xc0000101, %ecx
	wrmsr
	call	guest_main
1:	hlt
	jmp	1b

/* Exception stubs: push a dummy error code where the CPU pushes none. */
.macro exc_stub vec, has_error
	.globl exc_stub_\vec
exc_stub_\vec:
	.if \has_error == 0
	pushq	$0
	.endif
	pushq	$\vec
	jmp	exc_common
.endm

	.text
exc_stub 0, 0
exc_stub 1, 0
exc_stub 2, 0
exc_stub 3, 0
exc_stub 4, 0
exc_stub 5, 0
exc_stub 6, 0
exc_stub 7, 0
exc_stub 8, 1
exc_stub 9, 0
exc_stub 10, 1
exc_stub 11, 1
exc_stub 12, 1
exc_stub 13, 1
exc_stub 14, 1
exc_stub 15, 0
exc_stub 16, 0
exc_stub 17, 1
exc_stub 18, 0
exc_stub 19, 0

/* Saves the general registers as struct exc_frame (guest.h) and calls C. */
exc_common:
	push	%rax
	push	%rbx
	push	%rcx
	push	%rdx
	push	%rsi
	push	%rdi
	push	%rbp
	push	%r8
	push	%r9
	push	%r10
	push	%r11
	push	%r12
	push	%r13
	push	%r14
	push	%r15
	mov	%rsp, %rdi
	/* keep the ABI's 16-byte stack alignment for the C handler */
	mov	%rsp, %rbx
	and	$-16, %rsp
	call	exception_dispatch
	mov	%rbx, %rsp
	pop	%r15
	pop	%r14
	pop	%r13
	pop	%r12
	pop	%r11
	pop	%r10
	pop	%r9
	pop	%r8
	pop	%rbp
	pop	%rdi
	pop	%rsi
	pop	%rdx
	pop	%rcx
	pop	%rbx
	pop	%rax
	add	$16, %rsp	/* vector, error code */
	iretq

/*
 * Machine-check-safe page access, like the kernel's copy_mc_*: the code
 * from the retired check to the return is listed in __mc_extable as one
 * range, and the #MC handler resumes at its fixup, which returns -1, instead
 * of going on. A range, not the one access instruction: an action-optional
 * machine check arrives at whatever instruction the vCPU is at, and if it
 * retires this page, nothing after it may touch the page again.
 *
 * The retired bit is tested inside the range, so a machine check that
 * retires the page between the caller's own check and the call is caught
 * too: before the test, the test sees the bit; after it, the fixup runs.
 */
.macro mc_extable start, end, fixup
	.pushsection __mc_extable, "aw"
	.quad	\start, \end, \fixup
	.popsection
.endm

/*
 * long mc_safe_fill(void *page, uint64_t seed, const uint64_t *retired_word,
 *                   uint64_t retired_bit): page[i] = seed + i
 */
	.globl mc_safe_fill
mc_safe_fill:
0:	test	%rcx, (%rdx)
	jnz	3f
	xor	%ecx, %ecx
1:	lea	(%rsi,%rcx), %rax
	mov	%rax, (%rdi,%rcx,8)
	inc	%rcx
	cmp	$512, %rcx
	jb	1b
	xor	%eax, %eax
4:	ret
3:	mov	$-1, %rax
	ret
	mc_extable 0b, 4b, 3b

/*
 * long mc_safe_verify(const void *page, uint64_t seed, const uint64_t *retired_word,
 *                     uint64_t retired_bit): count of words != seed + i
 */
	.globl mc_safe_verify
mc_safe_verify:
0:	test	%rcx, (%rdx)
	jnz	3f
	xor	%ecx, %ecx
	xor	%edx, %edx
1:	mov	(%rdi,%rcx,8), %rax
	lea	(%rsi,%rcx), %r8
	cmp	%r8, %rax
	setne	%r9b
	movzbq	%r9b, %r9
	add	%r9, %rdx
	inc	%rcx
	cmp	$512, %rcx
	jb	1b
	mov	%rdx, %rax
4:	ret
3:	mov	$-1, %rax
	ret
	mc_extable 0b, 4b, 3b

	.bss
	.align	4096
	.globl	stacks
stacks:
	.skip	STACK_SIZE * 8
	.globl	percpu
	.align	64
percpu:
	.skip	64 * 8
	.section .note.GNU-stack, "", @progbits
