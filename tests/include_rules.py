#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The include rules of docs/design/architecture.md ("Who may include what"), checked on the sources. Fails listing
each include that breaks one:

- an engine folder includes only itself and the folders below it, in the order of ENGINE_LAYERS, through its own
  headers ("model/...") and the public ones (<kforge/...>, each the layer of the source that implements it); the
  exceptions in UPWARD_EXCEPTIONS are the ones architecture.md lists, with the reason;
- the engine includes no Qt header;
- the public headers (engine/include/kforge) include no LibTorch header, except the plugin SDKs;
- the UI and the CLI never include engine/src (white-box tests may) nor the plugin SDKs;
- ui/item_models includes no widget header and nothing of ui/views;
- ui/controllers includes nothing of ui/views (a controller reaches a page through an interface it declares);
- only the window (ui/main_window*) includes ui/workspaces: views, controllers, models and app helpers never do;
- nothing in ui/ but the window itself includes ui/main_window.h (app/studio's startup script drives the window).

  include_rules.py SOURCE_ROOT"""
import os
import re
import sys

ENGINE_LAYERS = ["common", "runtime", "providers", "model", "plan", "profiling", "measure", "optimizer"]
# (file, included folder): a capture records its module scopes and calls with CUPTI's external ids, so that replayed
# kernels are attributed (R15); ModelSession::capture belongs to the model's API.
UPWARD_EXCEPTIONS = {
    ("engine/src/model/cuda_capture.cpp", "profiling"),
}
SDK_HEADERS = {"provider_sdk.h", "provider_args.h", "generator_sdk.h"}
# The layer of a public header (engine/include/kforge/NAME.h) is that of engine/src/LAYER/NAME.cpp, which implements
# it; these have no such source (types only, or implemented under another name), so they are named here. The provider
# SDK and plan.h are the runtime's contract (it resolves plan entries into providers; plan/ reads and writes plans,
# providers/ implements the SDK). An engine source including <kforge/NAME.h> includes that layer.
PUBLIC_HEADER_LAYERS = {
    "capture.h": "runtime", "doctor.h": "profiling", "events.h": "runtime", "generator_sdk.h": "runtime",
    "module_info.h": "common", "module_path.h": "common", "optimizer.h": "optimizer", "plan.h": "runtime",
    "plugins.h": "providers", "profile_export.h": "profiling", "profiling.h": "profiling", "progress.h": "common",
    "provider_args.h": "runtime", "provider_sdk.h": "runtime", "runtime_types.h": "common",
    "tensor_digest.h": "common", "verify_thresholds.h": "common",
}
PUBLIC = re.compile(r'#include\s*<kforge/([^>]+)>')
LIBTORCH = re.compile(r'#include\s*<(torch|ATen|c10|caffe2)/')
QT = re.compile(r'#include\s*<Q[A-Za-z]')
QUOTED = re.compile(r'#include\s*"([^"]+)"')
ANGLED = re.compile(r'#include\s*<([^>]+)>')
WIDGETS = re.compile(r'#include\s*<(QtWidgets/|QWidget|QAbstractItemView|QDialog|QMainWindow|QLabel|QTreeView)')


def sources(root, top):
    for folder, _, files in os.walk(os.path.join(root, top)):
        for name in sorted(files):
            if name.endswith((".cpp", ".h", ".cu", ".cuh")):
                path = os.path.join(folder, name)
                yield os.path.relpath(path, root), open(path, encoding="utf-8", errors="replace").read().splitlines()


def public_header_layers(root):
    """Each public header's layer; a header with none is itself a broken rule (listed as such)."""
    layers, unknown = {}, []
    for name in sorted(os.listdir(os.path.join(root, "engine", "include", "kforge"))):
        if not name.endswith(".h"):
            continue
        owners = [layer for layer in ENGINE_LAYERS
                  if os.path.exists(os.path.join(root, "engine", "src", layer, name[:-2] + ".cpp"))]
        if name in PUBLIC_HEADER_LAYERS:
            layers[name] = PUBLIC_HEADER_LAYERS[name]
        elif len(owners) == 1:
            layers[name] = owners[0]
        else:
            unknown.append(name)
    return layers, unknown


def main() -> int:
    root = sys.argv[1]
    broken = []
    header_layers, unknown = public_header_layers(root)
    for name in unknown:
        broken.append(f"engine/include/kforge/{name}: no layer (add engine/src/LAYER/{name[:-2]}.cpp or name it in "
                      "PUBLIC_HEADER_LAYERS)")

    def report(path, number, line, rule):
        broken.append(f"{path}:{number}: {line.strip()}  ({rule})")

    for path, lines in sources(root, "engine"):
        parts = path.split(os.sep)
        layer = parts[2] if len(parts) > 3 and parts[1] == "src" else None
        public = parts[1] == "include"
        for number, line in enumerate(lines, 1):
            if QT.search(line):
                report(path, number, line, "the engine has no Qt")
            if public and LIBTORCH.search(line) and parts[-1] not in SDK_HEADERS:
                report(path, number, line, "public headers include no LibTorch header")
            quoted = QUOTED.search(line)
            public_include = PUBLIC.search(line)
            if layer in ENGINE_LAYERS and public_include and public_include.group(1) in header_layers:
                included = header_layers[public_include.group(1)]
                if (ENGINE_LAYERS.index(included) > ENGINE_LAYERS.index(layer)
                        and (path.replace(os.sep, "/"), included) not in UPWARD_EXCEPTIONS):
                    report(path, number, line, f"engine/src/{layer} includes only folders below it, not {included} "
                           f"(<kforge/{public_include.group(1)}> is {included}'s)")
            if layer in ENGINE_LAYERS and quoted:
                included = quoted.group(1).split("/")[0]
                if (included in ENGINE_LAYERS and ENGINE_LAYERS.index(included) > ENGINE_LAYERS.index(layer)
                        and (path.replace(os.sep, "/"), included) not in UPWARD_EXCEPTIONS):
                    report(path, number, line, f"engine/src/{layer} includes only folders below it, not {included}")

    for top in ("ui", "app"):
        for path, lines in sources(root, top):
            in_models = path.startswith(os.path.join("ui", "item_models"))
            in_controllers = path.startswith(os.path.join("ui", "controllers"))
            may_see_workspaces = (path.startswith(os.path.join("ui", "workspaces"))
                                  or os.path.basename(path).startswith("main_window"))
            for number, line in enumerate(lines, 1):
                quoted = QUOTED.search(line)
                angled = ANGLED.search(line)
                if quoted and quoted.group(1).split("/")[0] in ENGINE_LAYERS + ["engine"]:
                    report(path, number, line, "the faces see the engine through engine/include/kforge only")
                if angled and angled.group(1) in {"kforge/" + h for h in SDK_HEADERS}:
                    report(path, number, line, "the faces never include the plugin SDKs (LibTorch)")
                if in_models and (WIDGETS.search(line) or (quoted and quoted.group(1).startswith("views/"))):
                    report(path, number, line, "ui/item_models is Qt Core/Gui only, no widget or view")
                if in_controllers and quoted and quoted.group(1).startswith("views/"):
                    report(path, number, line, "no controller includes a view")
                if quoted and quoted.group(1).startswith("workspaces/") and not may_see_workspaces:
                    report(path, number, line, "only the window includes ui/workspaces")
                if (top == "ui" and quoted and quoted.group(1) == "main_window.h"
                        and not os.path.basename(path).startswith("main_window")):
                    report(path, number, line, "nothing in ui/ includes the window it is part of (what drives the "
                                               "window, the startup script, is in app/studio)")

    for b in broken:
        print(b)
    print(f"include_rules: {len(broken)} include(s) break a rule" if broken else "include_rules: every include keeps the rules")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
