#!/bin/bash
# cmpcase.sh FILE ID  -> prints the large-event diff between our stream and the recorded one
cd /work/scratch_dbg
./dumpops /work/main/data/validation/$1.jsonl $2 > cap3/ours-$2.txt
awk '{print $1, $2, $3, 0, 0}' cap3/ours-$2.txt > cap3/ours-$2-ev.txt
python3 cmp3.py cap3/ev-$2.json.gz cap3/ours-$2.txt 1048575 ${3:-20}
