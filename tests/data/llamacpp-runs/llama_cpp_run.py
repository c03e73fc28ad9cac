"""One llama-cpp-python run, as record.py makes it: MODEL CTX PROMPT N_PREDICT [mmap|none].

PROMPT is a file beside this script when one has that name, else the text itself.
"""

import sys
from pathlib import Path

from llama_cpp import Llama

model, ctx, prompt, n_predict = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
use_mmap = (sys.argv[5] if len(sys.argv) > 5 else "mmap") != "none"
path = Path(__file__).with_name(prompt)
text = path.read_text() if path.is_file() else prompt
llm = Llama(model_path=model, n_ctx=ctx, n_threads=2, use_mmap=use_mmap, verbose=True)
out = llm(text, max_tokens=n_predict)
print(out["usage"], file=sys.stderr)
llm.close()
