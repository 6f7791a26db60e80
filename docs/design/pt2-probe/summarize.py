# SPDX-License-Identifier: Apache-2.0
# per-node summary of a nrt_probe --trace --vlog log: node target -> top-level dispatcher ops seen
import sys, re, collections
lines = open(sys.argv[1]).read().split('RecordFunction trace during run()')[1].splitlines()[1:]
nodes = []; cur = None
for l in lines:
    if l.startswith('NODE-BEGIN'):
        m = re.match(r'NODE-BEGIN (.*?) = (\S+?)\(', l); cur = [m.group(1).split(',')[0], m.group(2), []]; nodes.append(cur)
    elif l.startswith('NODE-END'): cur = None
    elif l.startswith('d0 scope=0') and cur is not None: cur[2].append(l.split()[2])
pat = collections.OrderedDict()
for name, tgt, ops in nodes: pat.setdefault((tgt, tuple(ops)), []).append(name)
print(f"{len(nodes)} nodes executed")
for (tgt, ops), names in pat.items(): print(f"  {tgt:55s} x{len(names):2d} top-level dispatcher ops: {list(ops) or 'NONE'}")
