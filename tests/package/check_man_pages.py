"""The manual pages as installed: `cmake --install` puts xpose(1) and
xpose-gen(1) where `man` finds them (MANPATH set to the prefix's), they
render without a warning, and each lists exactly the options its
program's --help lists.  Usage: check_man_pages.py BUILD_DIR."""

import os
import re
import subprocess
import sys
import tempfile

PROGRAMS = ("xpose", "xpose-gen")


def options(text):
    """The long and short options of the lines that begin with one at an
    indent of at most 8 (an option list's tags, not their descriptions),
    up to the text describing them."""
    found = set()
    for line in text.splitlines():
        tag = re.match(r"^ {1,8}(-\S.*?)(\s{2,}|$)", line)
        if tag:
            found.update(re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", tag.group(1)))
    return found


def section(page, name):
    """The lines of a rendered page's section NAME."""
    match = re.search(rf"^{name}\n(.*?)(?=^[A-Z][A-Z ]+\n)", page, re.M | re.S)
    return match.group(1) if match else ""


def main(build):
    failures = []
    with tempfile.TemporaryDirectory(prefix="xpose-man-") as prefix:
        subprocess.run(["cmake", "--install", build, "--prefix", prefix], check=True,
                       stdout=subprocess.DEVNULL)
        mandir = os.path.join(prefix, "share", "man")
        env = {**os.environ, "MANPATH": mandir, "MANWIDTH": "100", "MAN_KEEP_FORMATTING": "",
               "LC_ALL": "C.UTF-8"}
        for program in PROGRAMS:
            page = os.path.join(mandir, "man1", program + ".1")
            if not os.path.isfile(page):
                failures.append(f"{page}: not installed")
                continue
            shown = subprocess.run(["man", "-P", "cat", program], env=env, capture_output=True,
                                   text=True)
            local = subprocess.run(["man", "--warnings", "-l", page], env=env,
                                   capture_output=True, text=True)
            rendered = re.sub(r".\x08", "", shown.stdout)
            name = " ".join(section(rendered, "NAME").split())  # justified: spaces vary
            if shown.returncode != 0 or not name.startswith(f"{program} - "):
                failures.append(f"man {program} with MANPATH={mandir}: {shown.stderr.strip()}")
            if local.returncode != 0 or local.stderr.strip():
                failures.append(f"man -l {page}: {local.stderr.strip()}")
            helped = subprocess.run([os.path.join(prefix, "bin", program), "--help"],
                                    capture_output=True, text=True)
            in_help = options(helped.stdout.split("Options:", 1)[-1].split("Examples:")[0])
            in_page = options(section(rendered, "OPTIONS"))
            if not in_help or in_help != in_page:
                failures.append(f"{program}: --help lists {sorted(in_help - in_page)} that the "
                                f"page does not, the page {sorted(in_page - in_help)} that "
                                f"--help does not")
            print(f"{program}: {len(in_page)} options in the page and in --help")
    for failure in failures:
        print("FAILED:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
