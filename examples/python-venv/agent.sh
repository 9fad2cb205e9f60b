#!/bin/sh
# A scripted stand-in for a coding agent (it calls no model): it lowercases the title before
# splitting it into words.
set -eu
echo "agent: task is $(head -n 1 "$1")"
sed -i 's/re.findall(r"\[a-z0-9\]+", title)/re.findall(r"[a-z0-9]+", title.lower())/' slugify/__init__.py
