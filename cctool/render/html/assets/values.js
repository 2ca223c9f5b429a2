// values.js: how every page spells a value, by the rules cctool.render.values holds (they
// arrive as data: RULES below is filled in when the page is made). One rule per unit family:
// times scaled to s/ms/µs/ns and bytes to binary units with 4 significant digits, counts
// with thousands separators (whole numbers without decimals), percentages as "45.1%" or
// "<0.01%", ratios as "0.5825x"; a call path as "main / solve". toFixed and toExponential
// round half away from zero on the exact value, as the Python side does.
const CCTValues = ((R) => {
  const missing = R.missing;

  function family(unit) {
    const u = (unit || "").trim();
    return Object.prototype.hasOwnProperty.call(R.families, u) ? R.families[u] : R.defaultFamily;
  }

  // [rounded magnitude, decimal exponent] of a positive magnitude at `digits` digits.
  function rounded(mag, digits) {
    const s = mag.toExponential(digits - 1);
    return [parseFloat(s), parseInt(s.slice(s.indexOf("e") + 1), 10)];
  }

  function group(text) { // thousands separators in the integer part
    const dot = text.indexOf(".");
    const int = dot < 0 ? text : text.slice(0, dot);
    const rest = dot < 0 ? "" : text.slice(dot);
    return int.replace(/\B(?=(\d{3})+(?!\d))/g, R.separator) + rest;
  }

  function number(mag, digits, whole) {
    const [r, exp] = rounded(mag, digits);
    if (r >= R.expHigh || (r < R.expLow && !whole)) {
      const s = mag.toExponential(digits - 1);
      const e = s.indexOf("e");
      return s.slice(0, e) + "e" + s.slice(e + 1);
    }
    return group(mag.toFixed(whole ? 0 : Math.max(0, digits - 1 - exp)));
  }

  function percent(p) {
    if (p === null || p === undefined) return missing;
    if (Number.isNaN(p)) return "nan";
    if (!Number.isFinite(p)) return p > 0 ? "inf%" : "-inf%";
    const mag = Math.abs(p);
    if (mag === 0) return "0%";
    if (mag < R.percentFloor) return (p < 0 ? ">-" : "<") + R.percentFloor + "%";
    const decimals = mag >= 99.95 ? 0 : mag >= 9.995 ? 1 : 2;
    return (p < 0 ? "-" : "") + group(mag.toFixed(decimals)) + "%";
  }

  function format(v, unit, whole, digits) {
    const fam = family(unit);
    const d = Math.max(1, digits || R.digits);
    if (v === null || v === undefined) return missing;
    if (fam === "percent") return percent(v);
    if (Number.isNaN(v)) return "nan";
    if (!Number.isFinite(v)) return v > 0 ? "inf" : "-inf";
    if (v === 0) return "0";
    const sign = v < 0 ? "-" : "";
    const mag = Math.abs(v);
    const scales = R.scales[fam];
    if (scales) {
      const last = scales[scales.length - 1][0];
      for (const [f, name] of scales) {
        const x = mag / f;
        if (rounded(x, d)[0] >= 1 || f === last) {
          const plain = fam === "bytes" && f === 1 && (!!whole || Number.isInteger(x));
          return `${sign}${number(x, d, plain)} ${name}`;
        }
      }
    }
    const plain = !!whole || ((fam === "count" || fam === "other") && Number.isInteger(mag));
    return sign + number(mag, d, plain) + (fam === "ratio" ? R.ratioSuffix : "");
  }

  // Does a formatted value carry its unit (2.4 ms, 1.5 GiB, 45.1%, 0.58x)? Else a header or
  // a column names it.
  const carriesUnit = (unit) => ["time", "bytes", "percent", "ratio"].includes(family(unit));

  return { format, percent, family, carriesUnit, path: (names) => names.join(R.path), rules: R };
})(/*RULES*/null);
