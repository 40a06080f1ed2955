; seed C6: the vector max waits for e0, which covers the first load only; the second load writes what it reads
        li r1, 0x100
        li r2, 0x200
        dma.load r1, input, r0, 16 signal(e0)
        dma.load r2, input, r0, 16
        vec.max r1, r1, r2, 16 wait(e0)
        halt
