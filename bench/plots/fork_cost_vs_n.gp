# Draws fork_cost_vs_n.dat (written by fork_cost_vs_n.sh).  Standalone:
#   gnuplot -e "dat='bench/plots/fork_cost_vs_n.dat'; png='bench/plots/fork_cost_vs_n.png'; \
#               when='2026-11-30'; machine='2-core Xeon, shared'" bench/plots/fork_cost_vs_n.gp
if (!exists("dat")) dat = 'fork_cost_vs_n.dat'
if (!exists("png")) png = 'fork_cost_vs_n.png'
if (!exists("when")) when = ''
if (!exists("machine")) machine = ''

set terminal pngcairo size 800,500 font 'DejaVu Sans,9' noenhanced
set output png
set title sprintf("strata W1: cost of one SET against graph size N (medians)\n%s, %s", when, machine)
set logscale xy
set xrange [6e3:1.6e7]
set yrange [0.1:3e8]
set xtics ("10^4" 1e4, "10^5" 1e5, "10^6" 1e6, "10^7" 1e7)
set ytics ("0.1 us" 0.1, "1 us" 1, "10 us" 10, "100 us" 100, "1 ms" 1e3, "10 ms" 1e4, \
           "100 ms" 1e5, "1 s" 1e6, "10 s" 1e7, "100 s" 1e8)
set mytics 10
set xlabel "nodes in the graph (N, log scale)"
set ylabel "time per operation (log scale)"
set grid xtics ytics mytics lc rgb '#dddddd'
set key at screen 0.625,0.89 left top vertical Left reverse samplen 3 spacing 1.15
set rmargin at screen 0.60

set label 1 at screen 0.625,0.50 left font 'DejaVu Sans,8' \
    "strata: medians of 2000 rounds\n(1000 at 10^6, 200 at 10^7), one SET\nof a random node's p1 each round.\nSeed 003: means from its table\n(1M nodes; 12 columns at 100k).\nDeep copy: fork_cost's build time\nof the same graph, for scale."

# One colour per graph shape, one dash pattern per case.
set linetype 1 lc rgb '#d62728' lw 2 pt 7 ps 1.1   # plain
set linetype 2 lc rgb '#2ca02c' lw 2 pt 7 ps 1.1   # 12 columns
set linetype 3 lc rgb '#1f77b4' lw 2 pt 7 ps 1.1   # indexed
held = 1; none = 2; deep = 3

# Seed 003's figures (means, one point each): after = held-view first write,
# before = the deep-copy fork it replaced.
$seed_after << EOD
1e6 4.6   1
1e5 587.6 2
1e6 97    3
EOD
$seed_before << EOD
1e6 36338  1
1e6 180000 3
EOD

# Columns of a shape s (0 plain, 1 12 columns, 2 indexed): held median 3+6s,
# nothing held median 6+6s, deep copy 7+6s.
col(s, k) = 3 + 6*s + (k == held ? 0 : k == none ? 3 : 4)

plot \
    NaN with lines lt 1 title 'plain (1 property)', \
    NaN with lines lt 2 title '12 columns', \
    NaN with lines lt 3 title 'indexed (5 indices)', \
    NaN with lines lc rgb 'black' lw 2 dt 1 title 'first write under a held view', \
    NaN with lines lc rgb 'black' lw 2 dt 2 title 'nothing held', \
    NaN with lines lc rgb 'black' lw 2 dt 3 title 'deep copy (rebuild via the API)', \
    NaN with points lc rgb 'black' pt 7 title 'seed 003 after: held view (mean)', \
    NaN with points lc rgb 'black' pt 6 title 'seed 003 before: deep copy (mean)', \
    for [s=0:2] dat using 1:col(s, held) with linespoints lt s+1 dt 1 pt 7 ps 0.7 notitle, \
    for [s=0:2] dat using 1:col(s, none) with linespoints lt s+1 dt 2 pt 7 ps 0.5 notitle, \
    for [s=0:2] dat using 1:col(s, deep) with linespoints lt s+1 dt 3 pt 7 ps 0.5 notitle, \
    $seed_after using 1:2:3 with points pt 7 ps 1.6 lc variable notitle, \
    $seed_before using 1:2:3 with points pt 6 ps 1.6 lw 2 lc variable notitle
