"""call_floor.py — the Python side of call_floor.cu: a submission's Python call of one torch op,
timed the gpu-mode evaluator's way (eval_better_bench.py: events around 50 back-to-back calls on
50 inputs, after a large allocation that evicts L2; the median of 20 batches). The op is a
one-kernel elementwise op on tiny tensors, so the time is the host's: the Python call, torch's
dispatch and the launch. Prints 'skip' and exits 0 where torch or a GPU is missing."""
import statistics
import sys

try:
    import torch
except ImportError:
    print("call_floor.py: skip (no torch)")
    sys.exit(0)
if not torch.cuda.is_available():
    print("call_floor.py: skip (no GPU)")
    sys.exit(0)


def custom_kernel(data):
    # the shape of a submission's call: unpack the tuple, one op writing the preallocated output
    return torch.mul(data[0], data[1], out=data[4])


def batch_us(fn, datas):
    us = []
    for b in range(21):
        dummy = torch.empty((1024, 1024, 256), device="cuda")  # 1 GiB: evicts L2
        del dummy
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for d in datas:
            fn(d)
        end.record()
        torch.cuda.synchronize()
        if b:
            us.append(start.elapsed_time(end) * 1000 / len(datas))
    return statistics.median(us)


datas = [tuple(torch.ones(128, device="cuda") for _ in range(5)) for _ in range(50)]
print(f"torch {torch.__version__}, {torch.cuda.get_device_name(0)}")
print(f"python call of one torch op,{batch_us(custom_kernel, datas):.3f}")
print(f"python call of an empty function,{batch_us(lambda d: None, datas):.3f}")
