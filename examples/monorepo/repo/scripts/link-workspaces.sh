#!/bin/sh
# What `npm install` does for workspaces without dependencies from the registry: link each package
# into node_modules under its name, so `import "@shop/prices"` resolves. Offline, in a second.
set -eu
mkdir -p node_modules/@shop
for dir in packages/*; do
  ln -sfn "../../$dir" "node_modules/@shop/$(basename "$dir")"
done
