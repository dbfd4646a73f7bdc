#!/usr/bin/env python3
"""Count import circles between the files of each crate under crates/*/src.

An edge A -> B when file A names a path that resolves to module file B: `crate::x::..`,
`super::x::..`, `self::x::..`, or a bare `x::..` where x is a submodule A declares (`mod x;`),
but not `pub use` lines: a module re-exporting its submodules' items is structure, not use.
A name re-exported by a module (`pub use y::Item`) is followed to the file that defines it.
Test code is left out (files named tests.rs and everything after `#[cfg(test)] mod tests {`). A circle is a strongly connected component of
more than one file; each is printed with its files (`-v`: and the edges between them).

Usage: tools/import_circles.py [REPO_ROOT] [-v]"""
import os, re, sys
args = [a for a in sys.argv[1:] if a != '-v']
root = args[0] if args else '.'
verbose = '-v' in sys.argv
crates = []
for c in sorted(os.listdir(os.path.join(root, 'crates'))):
    src = os.path.join(root, 'crates', c, 'src')
    if os.path.isdir(src): crates.append((c, src))

def modpath(src, f):
    rel = os.path.relpath(f, src)[:-3].split(os.sep)
    if rel[-1] == 'mod': rel = rel[:-1]
    if rel in (['lib'], ['main']): rel = []
    return tuple(rel)

total = 0
for name, src in crates:
    files = []
    for d, _, fs in os.walk(src):
        if os.sep + 'bin' in d: continue
        for f in fs:
            if f.endswith('.rs'): files.append(os.path.join(d, f))
    mods = {}
    for f in files:
        m = modpath(src, f)
        if m == () and f.endswith('main.rs') and any(x.endswith('lib.rs') for x in files):
            continue  # main.rs of a crate with a lib: its own root, uses the lib by name
        mods[m] = f
    texts = {}
    for m, f in mods.items():
        t = open(f).read()
        t = re.split(r'#\[cfg\(test\)\]\s*(?:pub\s+)?mod tests\s*\{', t)[0]
        t = re.sub(r'//[^\n]*', '', t)
        texts[m] = t
    # re-export lines are structure, not use: a front end may re-export its core
    uses = {m: re.sub(r'pub(?:\([^)]*\))?\s+use\s+[^;]*;', '', t) for m, t in texts.items()}
    # re-exports: module -> {name: target module path}
    reexp = {}
    for m, t in texts.items():
        r = {}
        for mt in re.finditer(r'pub(?:\([^)]*\))?\s+use\s+([\w:]+)::\{([^}]*)\}', t):
            for item in mt.group(2).split(','):
                item = item.strip().split(' as ')[-1].strip()
                if item: r[item] = mt.group(1)
        for mt in re.finditer(r'pub(?:\([^)]*\))?\s+use\s+([\w:]+)::(\w+)\s*(?:as\s+(\w+))?;', t):
            r[mt.group(3) or mt.group(2)] = mt.group(1)
        reexp[m] = r
    def resolve(base, path, depth=0):
        segs = list(base)
        target = tuple(segs) if tuple(segs) in mods else None
        for i, p in enumerate(path):
            cand = tuple(segs + [p])
            if cand in mods:
                segs.append(p); target = cand
                continue
            # item: follow a re-export one level
            if target is not None and p in reexp.get(target, {}) and depth < 5:
                sub = reexp[target][p].split('::')
                if sub[0] == 'crate': b = (); sub = sub[1:]
                elif sub[0] == 'super': b = target[:-1]; sub = sub[1:]
                elif sub[0] == 'self': b = target; sub = sub[1:]
                else: b = target
                r = resolve(b, sub, depth + 1)
                if r is not None: return r
            break
        return target
    edges = {m: set() for m in mods}
    for m, t in uses.items():
        if m and m[-1] == 'tests':
            continue  # a test module's own file
        children = set(re.findall(r'^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;', t, re.M))
        for mt in re.finditer(r'(?<![\w:])(crate|super|self|\w+)((?:::\w+)+)(?!\w|::\{)', t):
            kind, path = mt.group(1), mt.group(2).split('::')[1:]
            if kind == 'crate': base = ()
            elif kind == 'super': base = m[:-1]
            elif kind == 'self': base = m
            elif kind in children: base = m; path = [kind] + path
            else: continue
            tgt = resolve(base, path)
            if tgt is not None and tgt != m:
                edges[m].add(tgt)
        # groups: `crate::a::{B, c::D}`, `super::{x, y}`: each item resolved on its own
        for mt in re.finditer(r'(?<![\w:])(crate|super|self|\w+)((?:::\w+)*)::\{([^}]*)\}', t):
            kind, path = mt.group(1), [p for p in mt.group(2).split('::') if p]
            if kind == 'crate': base = ()
            elif kind == 'super': base = m[:-1]
            elif kind == 'self': base = m
            elif kind in children: base = m; path = [kind] + path
            else: continue
            for item in mt.group(3).split(','):
                item = item.strip()
                if not item or item == 'self': continue
                tgt = resolve(base, path + item.split(' as ')[0].strip().split('::'))
                if tgt is not None and tgt != m: edges[m].add(tgt)
    index, low, stack, on, sccs, counter = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(10000)
    def strong(v):
        index[v] = low[v] = counter[0]; counter[0] += 1; stack.append(v); on.add(v)
        for w in edges[v]:
            if w not in index: strong(w); low[v] = min(low[v], low[w])
            elif w in on: low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop(); on.discard(w); comp.append(w)
                if w == v: break
            sccs.append(comp)
    for v in edges:
        if v not in index: strong(v)
    fname = lambda x: os.path.relpath(mods[x], src)
    for c in sccs:
        if len(c) > 1:
            total += 1
            cs = set(c)
            print(f"{name}: circle of {len(c)} files: " + ", ".join(sorted(fname(x) for x in c)))
            if verbose:
                for a in sorted(c):
                    for b in sorted(edges[a] & cs):
                        print(f"    {fname(a)} -> {fname(b)}")
print("circles:", total)
