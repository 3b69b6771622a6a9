// Reads arrays of a Zarr v3 store with zarrita (Node.js), the way a
// JavaScript client reads them: each array's values written raw, in the
// machine's byte order, to OUTDIR/NAME.bin, and its shape and data type to
// OUTDIR/NAME.json, for the tests to compare.  Run from a directory whose
// node_modules holds zarrita (ES modules ignore NODE_PATH).
//   node read_v3.mjs STORE OUTDIR NAME...
import * as fs from "node:fs";
import * as path from "node:path";
import * as zarr from "zarrita";
import { FileSystemStore } from "@zarrita/storage";

const [store_path, out_dir, ...names] = process.argv.slice(2);
const root = zarr.root(new FileSystemStore(store_path));
for (const name of names) {
  const array = await zarr.open.v3(root.resolve(name), { kind: "array" });
  // a 0-d array's one chunk as it is (zarrita 0.4's get() gives 0 for it)
  const { data } = array.shape.length ? await zarr.get(array) : await array.getChunk([]);
  fs.writeFileSync(path.join(out_dir, `${name}.bin`),
                   Buffer.from(data.buffer, data.byteOffset, data.byteLength));
  fs.writeFileSync(path.join(out_dir, `${name}.json`),
                   JSON.stringify({ shape: array.shape, dtype: array.dtype }));
}
