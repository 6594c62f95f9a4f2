#!/bin/bash
set -u
B=/tmp/x/.gpu
cd /tmp
$B/scan-bench --sizes 10 --types f64 --algorithms select_if --no-copy > /tmp/build.log 2>&1 || tail -5 /tmp/build.log
CUB=/tmp/target/scan-bench-cub/scan_cub; ls -la $CUB
S="--section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats --section MemoryWorkloadAnalysis --section SchedulerStats"
for t in f64 f32; do for n in 24 28; do
 echo "######## warpsafe select_if $t 2^$n"
 ncu $S -k regex:warpsafe_select --launch-skip 3 --launch-count 1 $B/scan-bench --sizes $n --types $t --algorithms select_if --no-cub --no-copy --reps 1 --min-calls 1 --min-batch-ms 0 --out /tmp/o 2>&1 | grep -v "^scan-bench\|^==PROF==" 
 echo "######## CUB select_if $t 2^$n"
 ncu $S -k regex:SelectSweep --launch-skip 3 --launch-count 1 $CUB --counts $((1<<n)) --types $t --algorithms select_if --reps 1 --min-calls 1 --min-batch-ms 0 2>&1 | grep -v "^cub,\|^meta\|^==PROF=="
done; done > $OUT/ncu-select.txt 2>&1
grep -E "####|Duration|DRAM Throughput|Registers Per|Achieved Occupancy|Theoretical Occupancy|Issued Ipc|Stall|Block Size|Grid Size|Dynamic Shared" $OUT/ncu-select.txt | head -120
