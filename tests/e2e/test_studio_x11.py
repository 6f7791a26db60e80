#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""kforge-studio end to end, as a user drives it: the real program on a real X server (Xvfb, no window manager), its
keyboard shortcuts sent with xdotool, what it shows read from its windows, an xwd screenshot kept after each step.

  1. open builtin:tiny-gpt with a plan file: the main window is titled "<plan> — tiny-gpt — KForge Studio";
  1b. add a provider from the module tree by keyboard: Ctrl+F, "blocks.0.mlp", Return (the tree at that module), the
     Menu key, "Add provider for gelu here", its first provider: the plan is modified (the title gains "*"), and
     Ctrl+Z takes it back;
  2. F6, Run Baseline, then Ctrl+F6, Compare (the plan's providers in alternating rounds);
  3. Ctrl+Q with those results unsaved: the "Unsaved Profile" box asks; Escape (Cancel) keeps the window;
  4. Ctrl+Alt+O, a saved profile of another model (builtin:convnet, made with the CLI) typed into the file dialog:
     it opens in a report of its own, so nothing is replaced and nothing asks; Ctrl+W closes the report;
  5. Ctrl+Q: the compare's results are still there and unsaved, so the box asks; Discard ends the program with
     status 0.
Then a real model, as users save one: a Hugging Face Llama built from a config and traced (make_llama.py, with the
venv's Python given as --python), opened from the command line with its token ids (--inputs-file):
  6. its window is titled "... — llama.trace.pt — KForge Studio"; Ctrl+F "layers.1.mlp.act_fn" and Return take the
     tree to that module six levels down, and its menu adds a provider for silu there (the title gains "*");
  7. Ctrl+F6 compares the plan with the baseline on it (the window changes);
  8. Ctrl+Q asks about the unsaved plan, then about the unsaved results; Discard to both ends it with status 0.

A step is over when the window has stopped changing for STILL_SECONDS (the progress bar moves while a profile runs),
not after a fixed time. Xvfb, xdotool and xwd are Debian packages scripts/bootstrap installs; without them the test
fails and says so. Screenshots (.xwd: `xwud -in FILE`, GIMP, ImageMagick) go to --artifacts.

  test_studio_x11.py --studio build/bin/kforge-studio --kforge build/bin/kforge --plan PLAN.json --artifacts DIR
                     --python VENV/bin/python"""
import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time

STILL_SECONDS = 3
STEP_TIMEOUT = 240  # a step that never settles (a hang) fails here


def fail(what):
    sys.exit("FAIL: " + what)


def ok(what):
    print("ok:", what, flush=True)


class Display:
    """An Xvfb server on a free display number (-displayfd), stopped on exit."""

    def __enter__(self):
        read, write = os.pipe()
        self.server = subprocess.Popen(["Xvfb", "-displayfd", str(write), "-screen", "0", "1600x1000x24",
                                        "-nolisten", "tcp"], pass_fds=[write], stderr=subprocess.DEVNULL)
        os.close(write)
        with os.fdopen(read) as pipe:
            number = pipe.readline().strip()
        if not number:
            fail("Xvfb did not start")
        self.name = ":" + number
        return self

    def __exit__(self, *exc):
        self.server.terminate()
        self.server.wait(timeout=30)


class Session:
    def __init__(self, display, artifacts):
        self.env = dict(os.environ, DISPLAY=display)
        self.artifacts = artifacts
        self.shots = 0

    def xdotool(self, *args, check=True):
        done = subprocess.run(["xdotool", *args], env=self.env, capture_output=True, text=True, timeout=120)
        if check and done.returncode != 0:
            fail(f"xdotool {' '.join(args)}: {done.stderr.strip()}")
        return done.stdout.split()

    def window(self, title, timeout=120):
        """The id of the window whose name contains `title`, waiting up to `timeout` seconds; None if none."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.xdotool("search", "--name", title, check=False)
            if found:
                return found[0]
            time.sleep(0.5)
        return None

    def image(self, window):
        done = subprocess.run(["xwd", "-id", window, "-silent"], env=self.env, capture_output=True, timeout=60)
        return done.stdout if done.returncode == 0 else b""

    def screenshot(self, window, step):
        self.shots += 1
        path = os.path.join(self.artifacts, f"{self.shots:02d}-{step}.xwd")
        with open(path, "wb") as f:
            f.write(self.image(window))
        return path

    def settle(self, window, what):
        """Waits until the window has looked the same for STILL_SECONDS."""
        deadline = time.monotonic() + STEP_TIMEOUT
        last, since = None, time.monotonic()
        while time.monotonic() < deadline:
            digest = hashlib.sha256(self.image(window)).hexdigest()
            if digest != last:
                last, since = digest, time.monotonic()
            elif time.monotonic() - since >= STILL_SECONDS:
                return
            time.sleep(0.5)
        fail(f"{what}: the window kept changing for {STEP_TIMEOUT} s")

    def visible_windows(self):
        """The ids of the mapped windows: a menu is a popup window of its own (no window manager here)."""
        return set(self.xdotool("search", "--onlyvisible", "--class", ".*", check=False))

    def new_window(self, before, what, timeout=30):
        """A window mapped since `before` was taken, waited for up to `timeout` seconds (a loaded machine is slow)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            added = self.visible_windows() - before
            if added:
                time.sleep(0.3)  # mapped; let it take the keyboard grab
                return sorted(added)[0]
            time.sleep(0.2)
        fail(f"{what} did not open within {timeout} s")

    def name(self, window):
        return " ".join(self.xdotool("getwindowname", window))

    def key(self, window, keys):
        self.xdotool("windowfocus", "--sync", window)
        self.xdotool("key", "--clearmodifiers", keys)

    def add_provider_from_tree(self, window, module):
        """By keyboard, as a user without a mouse: Ctrl+F, the module's path, Return (the tree at the first match),
        the Menu key (its menu), Down to "Add provider for FUNCTION here", Right into its providers, Return (the
        first). Fails unless the plan is modified (the title gains "*"); returns the title before."""
        title = self.name(window)
        self.key(window, "ctrl+f")
        self.xdotool("type", "--delay", "20", module)
        self.key(window, "Return")
        before = self.visible_windows()
        self.key(window, "Menu")
        menu = self.new_window(before, f"the menu of {module} (the Menu key)")
        self.xdotool("key", "Down")  # "Add provider for ... here"
        self.xdotool("key", "Right")  # its providers, a popup of their own
        self.new_window(before | {menu}, f"the providers offered in {module} (Right in the menu)")
        self.xdotool("key", "Return")  # the first one
        self.settle(window, f"adding a provider in {module} from the tree")
        added = self.name(window)
        if added == title or "*" not in added:
            fail(f"adding a provider in {module} from the tree's menu left the plan unmodified (title {added!r})")
        return title

    def discard_each_prompt(self, studio, titles):
        """Answers each box in `titles`, in order, with Discard (Tab from Save, then space); the program must end
        with status 0."""
        for title in titles:
            prompt = self.window(title, timeout=30)
            if not prompt:
                fail(f"Ctrl+Q did not ask (no '{title}' window)")
            self.settle(prompt, f"the {title} box")
            self.key(prompt, "Tab")  # from Save to Discard
            self.key(prompt, "space")
        try:
            status = studio.wait(timeout=60)
        except subprocess.TimeoutExpired:
            fail("Discard did not end the program within 60 s")
        if status != 0:
            fail(f"the program exited with status {status}:\n{studio.stdout.read()}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--studio", required=True)
    parser.add_argument("--kforge", required=True, help="the CLI, to save a profile of another model")
    parser.add_argument("--plan", required=True)
    parser.add_argument("--artifacts", required=True)
    parser.add_argument("--python", required=True, help="the bootstrap venv's Python, to make the Hugging Face model")
    args = parser.parse_args()
    missing = [tool for tool in ("Xvfb", "xdotool", "xwd") if not shutil.which(tool)]
    if missing:
        fail(f"{', '.join(missing)} not installed (scripts/bootstrap installs them)")
    os.makedirs(args.artifacts, exist_ok=True)
    for old in os.listdir(args.artifacts):  # an earlier run's screenshots would read as this run's
        if old.endswith(".xwd"):
            os.remove(os.path.join(args.artifacts, old))
    plan_name = os.path.basename(args.plan)
    with Display() as display, tempfile.TemporaryDirectory() as home:
        session = Session(display.name, args.artifacts)
        # Settings and recent files of its own, so the user's are neither read nor written.
        env = dict(session.env, XDG_CONFIG_HOME=os.path.join(home, "config"), XDG_DATA_HOME=os.path.join(home, "data"),
                   XDG_RUNTIME_DIR=home, QT_QPA_PLATFORM="xcb")
        studio = subprocess.Popen([args.studio, "builtin:tiny-gpt", "--plan", args.plan], env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            main_window = session.window(f"{plan_name} — tiny-gpt — KForge Studio")
            if not main_window:
                fail("no window titled '" + plan_name + " — tiny-gpt — KForge Studio' within 120 s")
            session.settle(main_window, "opening tiny-gpt")
            ok(f"the model and the plan open: {session.screenshot(main_window, 'opened')}")

            # A provider added from the tree, by keyboard ("Add provider for gelu here").
            title = session.add_provider_from_tree(main_window, "blocks.0.mlp")
            ok(f"a provider added from the tree's menu modifies the plan ({session.name(main_window)!r}): "
               f"{session.screenshot(main_window, 'provider-added')}")
            session.key(main_window, "ctrl+z")  # undone: the plan file is the test's, and quitting must not ask about it
            session.settle(main_window, "Undo (Ctrl+Z)")
            if session.name(main_window) != title:
                fail(f"Ctrl+Z did not take the added entry back (title {session.name(main_window)!r})")
            ok("Ctrl+Z takes the added entry back: the plan is as its file again")
            opened = session.image(main_window)

            # Each action must change what the window shows (the Profile tab and its tables, then the comparison).
            session.key(main_window, "F6")
            session.settle(main_window, "Run Baseline (F6)")
            baseline = session.image(main_window)
            if baseline == opened:
                fail("F6 changed nothing on screen")
            ok(f"F6 ran a baseline: {session.screenshot(main_window, 'baseline')}")
            session.key(main_window, "ctrl+F6")
            session.settle(main_window, "Compare (Ctrl+F6)")
            compared = session.image(main_window)
            if compared == baseline:
                fail("Ctrl+F6 changed nothing on screen")
            ok(f"Ctrl+F6 compared the plan: {session.screenshot(main_window, 'compare')}")

            session.key(main_window, "ctrl+q")
            prompt = session.window("Unsaved Profile", timeout=30)
            if not prompt:
                fail("Ctrl+Q with unsaved results did not ask (no 'Unsaved Profile' window)")
            session.settle(prompt, "the Unsaved Profile box")
            ok(f"Ctrl+Q with unsaved results asks: {session.screenshot(prompt, 'asked')}")
            session.key(prompt, "Escape")
            deadline = time.monotonic() + 30
            while session.xdotool("search", "--name", "Unsaved Profile", check=False) and time.monotonic() < deadline:
                time.sleep(0.5)
            if studio.poll() is not None or not session.window("KForge Studio", timeout=5):
                fail("Cancel in the Unsaved Profile box closed the program")
            ok("Escape cancels: the window stays")

            other = os.path.join(home, "convnet.kfprof")
            subprocess.run([args.kforge, "profile", "builtin:convnet", "--warmup", "1", "--iterations", "2", "--save",
                            other, "-q"], check=True, capture_output=True, timeout=300)
            session.key(main_window, "ctrl+alt+o")
            dialog = session.window("Open Profile", timeout=30)
            if not dialog:
                fail("Ctrl+Alt+O opened no 'Open Profile' dialog")
            time.sleep(1)  # the file name field has the focus; its cursor blinks, so the dialog never settles
            session.xdotool("windowfocus", "--sync", dialog)
            session.xdotool("type", "--delay", "20", other)
            session.xdotool("key", "Return")
            if session.window("Unsaved Profile", timeout=10):
                fail("opening a profile of another model asked about the results on screen: it must open in a "
                     "report of its own and replace nothing")
            session.settle(main_window, "opening convnet.kfprof")
            report = session.image(main_window)
            if report == compared:
                fail("opening convnet.kfprof changed nothing on screen")
            ok(f"the other model's profile opens in its own report, nothing asked: "
               f"{session.screenshot(main_window, 'report')}")
            session.key(main_window, "ctrl+w")
            session.settle(main_window, "Close Report (Ctrl+W)")
            if session.image(main_window) == report:
                fail("Ctrl+W did not close the report")
            ok(f"Ctrl+W closes the report: {session.screenshot(main_window, 'report-closed')}")

            session.key(main_window, "ctrl+q")
            prompt = session.window("Unsaved Profile", timeout=30)
            if not prompt:
                fail("Ctrl+Q after closing the report did not ask about the compare's unsaved results: the report "
                     "replaced them")
            session.discard_each_prompt(studio, ["Unsaved Profile"])
            ok("Ctrl+Q asks about the compare's results still unsaved; Discard ends the program, status 0")
        finally:
            if studio.poll() is None:
                studio.kill()
                studio.wait()
        real_model(session, args, env, home)
    return 0


def real_model(session, args, env, home):
    """Steps 6-8: a traced Hugging Face Llama, opened from the command line with its inputs."""
    made = subprocess.run([args.python, os.path.join(os.path.dirname(os.path.abspath(__file__)), "make_llama.py"),
                           home], capture_output=True, text=True, timeout=300)
    if made.returncode != 0:
        fail(f"make_llama.py (transformers from scripts/bootstrap) failed: {made.stderr[-600:]}")
    studio = subprocess.Popen([args.studio, os.path.join(home, "llama.trace.pt"), "--inputs-file",
                               os.path.join(home, "llama.input.pt")], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    try:
        window = session.window("llama.trace.pt — KForge Studio")
        if not window:
            fail("no window titled '... — llama.trace.pt — KForge Studio' within 120 s")
        session.settle(window, "opening llama.trace.pt")
        ok(f"a traced Hugging Face Llama opens: {session.screenshot(window, 'llama-opened')}")
        session.add_provider_from_tree(window, "layers.1.mlp.act_fn")
        ok(f"a provider added six levels down the tree ({session.name(window)!r}): "
           f"{session.screenshot(window, 'llama-provider-added')}")
        before = session.image(window)
        session.key(window, "ctrl+F6")
        session.settle(window, "Compare (Ctrl+F6) on the Llama")
        if session.image(window) == before:
            fail("Ctrl+F6 changed nothing on screen")
        ok(f"Ctrl+F6 compared the plan on the Llama: {session.screenshot(window, 'llama-compare')}")
        session.key(window, "ctrl+q")
        session.discard_each_prompt(studio, ["Unsaved Plan", "Unsaved Profile"])
        ok("Ctrl+Q asks about the unsaved plan, then the unsaved results; Discard to both ends it, status 0")
    finally:
        if studio.poll() is None:
            studio.kill()
            studio.wait()


if __name__ == "__main__":
    sys.exit(main())
