# SPDX-License-Identifier: Apache-2.0
# check: k-th NativeRT "Executing:" node == k-th node of models/forward.json (by first output name and target)
import sys, re, json, zipfile
pkg, log = sys.argv[1], sys.argv[2]
z = zipfile.ZipFile(pkg); name = [n for n in z.namelist() if n.endswith('models/forward.json')][0]
nodes = json.loads(z.read(name))['graph_module']['graph']['nodes']
def first_out(n):
    o = n['outputs'][0]; k = next(iter(o)); v = o[k]
    return v['name'] if isinstance(v, dict) else (v[0]['name'] if isinstance(v, list) else str(v))
js = [(first_out(n), n['target'], n['name'], n['metadata'].get('nn_module_stack', '').split(';')[-1].split(',')[1:2]) for n in nodes]
rt = [re.match(r'NODE-BEGIN %([^ ,]+).*? = (\S+?)\(', l).groups() for l in open(log) if l.startswith('NODE-BEGIN')]
ok = len(js) == len(rt) and all(a[0] == b[0] and a[1] == b[1] for a, b in zip(js, rt))
print(f"{pkg}: json nodes={len(js)} executed={len(rt)} same order/target/first-output={ok}")
for a, b in list(zip(js, rt))[:3]: print("   json:", a, " runtime:", b)
