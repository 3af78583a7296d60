#!/usr/bin/env python3
"""The CIL's per-CPU space counting (6.0+) on this machine's kernel: the size of the checkpoints
background pushes write when creators pinned to CPU 0 and CPU 1 commit at different rates (the
slow one pauses 0.5 ms every 50 creates). Root; a 16 GiB sparse file under /tmp on a direct-I/O
loop device, a 32 MiB log, 32 KiB iclogs; checkpoint bytes are the `offset`s of the iclogs
`xlog_iclog_sync` traces from one commit iclog (NEED_FUA) to the next. Everything it makes is
removed. Usage: scripts/kernel_cil_percpu.py [seconds per run] [one|even|uneven ...]"""
import os, subprocess, sys, time, multiprocessing as mp, statistics, re

IMG, MNT, T = '/tmp/pcpexp.img', '/tmp/pcpexp.mnt', '/sys/kernel/tracing/instances/pcpexp'


def sh(*a, **k):
    return subprocess.run(a, check=True, capture_output=True, text=True, **k).stdout.strip()


def creator(cpu, d, pause_every, secs, q):
    os.sched_setaffinity(0, {cpu})
    os.makedirs(d, exist_ok=True)
    end = time.monotonic() + secs
    i = 0
    while time.monotonic() < end:
        for _ in range(200):
            os.close(os.open(f'{d}/f{i}', os.O_CREAT | os.O_WRONLY, 0o644))
            i += 1
            if pause_every and i % pause_every == 0:
                time.sleep(0.0005)
    q.put((cpu, i))


def run(config, secs):
    for p in ['tracing_on']:
        open(f'{T}/{p}', 'w').write('0')
    open(f'{T}/trace', 'w').write('')
    open(f'{T}/tracing_on', 'w').write('1')
    q = mp.Queue()
    ps = [mp.Process(target=creator, args=(cpu, f'{MNT}/{config}-{cpu}', pause, secs, q)) for cpu, pause in CONFIGS[config]]
    for p in ps:
        p.start()
    for p in ps:
        p.join()
    open(f'{T}/tracing_on', 'w').write('0')
    counts = dict(q.get() for _ in ps)
    text = open(f'{T}/trace').read()
    ckpts, cur = [], 0
    for l in text.splitlines():
        m = re.search(r'xlog_iclog_sync: .* offset (\d+) lsn \S+ flags (\S*)', l)
        if not m:
            continue
        cur += int(m.group(1))
        if 'NEED_FUA' in m.group(2):
            ckpts.append(cur)
            cur = 0
    big = sorted(c for c in ckpts if c > 3 << 20)
    return counts, len(ckpts), big


CONFIGS = {
    'one': [(0, 0)],
    'even': [(0, 0), (1, 0)],
    'uneven': [(0, 0), (1, 50)],
}

if __name__ == '__main__':
    secs = float(sys.argv[1]) if len(sys.argv) > 1 else 10
    sh('truncate', '-s', '16G', IMG)
    loop = sh('losetup', '--direct-io=on', '-f', '--show', IMG)
    try:
        env = dict(os.environ, TEST_DIR='/nonexistent', TEST_DEV='/nonexistent', QA_CHECK_FS='xfs')
        sh('mkfs.xfs', '-f', '-q', '-l', 'size=32m', loop, env=env)
        os.makedirs(MNT, exist_ok=True)
        sh('mount', '-o', 'logbsize=32k', loop, MNT)
        os.makedirs(T, exist_ok=True)
        open(f'{T}/buffer_size_kb', 'w').write('65536')
        open(f'{T}/events/xfs/xlog_iclog_sync/enable', 'w').write('1')
        for config in sys.argv[2:] or CONFIGS:
            counts, n, big = run(config, secs)
            med = statistics.median(big) / 1048576 if big else 0
            print(f'{config}: creates per CPU {counts}; {n} checkpoints, {len(big)} over 3 MiB: '
                  f'median {med:.2f} MiB, p10 {big[len(big)//10]/1048576 if big else 0:.2f}, '
                  f'p90 {big[len(big)*9//10]/1048576 if big else 0:.2f}', flush=True)
    finally:
        subprocess.run(['umount', MNT])
        subprocess.run(['losetup', '-d', loop])
        os.remove(IMG)
        if os.path.isdir(MNT):
            os.rmdir(MNT)
        if os.path.isdir(T):
            open(f'{T}/tracing_on', 'w').write('0')
            open(f'{T}/events/xfs/xlog_iclog_sync/enable', 'w').write('0')
            os.rmdir(T)
