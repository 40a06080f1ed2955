; issue 26: nested loops of SEQ steps alone (janusc sim: cycle-limit)
loop 16384, 2
loop 16384, 1
nop
halt
