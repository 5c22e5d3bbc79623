// big_array: a plain Node.js workload for the benchmark suite
// (bench/suite.sh): builds an array of COUNT small objects and strings,
// sorts it, and joins part of it into one big string.
//
//   node big_array.js COUNT
'use strict';
const count = Number(process.argv[2] || 1000000);
const items = [];
for (let i = 0; i < count; ++i) items.push({ id: i, name: 'item-' + (i * 7919 % count), data: [i, i * 2] });
items.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
const text = items.slice(0, 100000).map((x) => x.name).join(',');
let checksum = 0;
for (let i = 0; i < text.length; i += 97) checksum = (checksum * 31 + text.charCodeAt(i)) % 1000000007;
console.log(`big_array: ${items.length} items, checksum ${checksum}`);
