; examples/vnpu/fc.s: one int8 fully connected layer with a fused ReLU on the vnpu.
;   y[16 x 32] = clamp(rq(sum_k (x[16 x 64] - zp_x) W[64 x 32] + bias, M[c]) + zp_y, zp_y, 127)
; DRAM: input = x (1024 B); weights = W (2048 B) then the requantization table (16 + 32 x 16 = 528 B);
; output = y (512 B). Data and the expected output: make_data.py. Run:
;   janusc sim fc.s --input input.bin --weights weights.bin --output-size 512 --output y.bin
.reg x = r1
.reg w = r2
.reg table = r3
.reg acc = r4
.reg y = r5
.reg off = r6
.event loaded = e1
.event product = e2
.event result = e3
.event stored = e4

        li x, 0x00000            ; LMEM
        li w, 0x01000
        li table, 0x02000
        li y, 0x03000
        li acc, 0x80000          ; ACC
        li off, 2048
        ; the DMA queue is in order: waiting for its last load orders the two before it too
        dma.load table, weights, off, 528
        dma.load x, input, r0, 1024
        dma.load w, weights, r0, 2048 signal(loaded)
        mac.cfg 16, 64, 32, 64   ; M, K, N, A's row stride
        mac.mm acc, x, w, -3 wait(loaded) signal(product)
        vec.rq y, acc, table, 32, 16 wait(product) signal(result)
        dma.store output, r0, y, 512 wait(result) signal(stored)
        sync 0x0010, 0x0000      ; SEQ waits for e4 (stored) before halting
        halt
