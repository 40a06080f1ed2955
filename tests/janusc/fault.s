; seed C4: 0x50000 is encodable in the 20-bit local address space but no memory lives there
        li r1, 0x50000
        dma.load r1, input, r0, 16 signal(e0)
        sync 0x0001, 0x0000
        halt
