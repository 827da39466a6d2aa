// docs/architecture.md's file table names every file of src/, folder by folder: what a newcomer reads first stays true.
import { readdir, readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { expect, it } from "vitest";

const project = resolve(import.meta.dirname, "../..");
const folderOf = (file: string) => (file.includes("/") ? file.slice(0, file.indexOf("/")) : "");

async function sourceFiles(): Promise<string[]> {
  const entries = await readdir(join(project, "src"), { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name).slice(join(project, "src").length + 1));
}

async function tableRows(): Promise<string[][]> {
  const doc = await readFile(join(project, "docs/architecture.md"), "utf8");
  const table = doc.slice(doc.indexOf("## The tree, file by file"));
  return [...table.matchAll(/^\| (`[^|]+`) \|/gm)].map((row) => [...row[1]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!));
}

it("names every file of src/", async () => {
  const named = new Set((await tableRows()).flat());
  expect((await sourceFiles()).filter((file) => !named.has(file))).toEqual([]);
});

it("names no file that is not there", async () => {
  const files = new Set(await sourceFiles());
  expect((await tableRows()).flat().filter((file) => !files.has(file))).toEqual([]);
});

it("lists the top-level files first, then each folder's rows together, folders in alphabetical order", async () => {
  const folders = (await tableRows()).map((row) => folderOf(row[0]!));
  // Each row's files share a folder.
  for (const row of await tableRows()) expect(new Set(row.map(folderOf)).size).toBe(1);
  const order = folders.filter((folder, i) => folder !== folders[i - 1]);
  expect(order).toEqual([...new Set(folders)].sort());
});
