// Renderers of the layout (transpose, permute, gather, slice, concat) and stencil families, and
// render_parts(), which picks a family's renderer (detail.hpp).
#include "env/taskgen/detail.hpp"

#include "env/shape_expr.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <sstream>

namespace leap::taskgen::detail {

// ---- layout: transpose, permute, gather, slice, concat ----

bool is_copy(const expr& map) { return to_text(canonical(map)) == "v"; }

// The i-th index of a strided slice, in prose ("1 + 2 * i") and C.
std::string affine(int start, int step, const std::string& var) {
  std::string t = step == 1 ? var : std::to_string(step) + " * " + var;
  return start == 0 ? t : std::to_string(start) + " + " + t;
}
// The number of indices start, start + step, ... below `bound`: (bound - start + step - 1) / step,
// in prose (spaced) or as a shape expression (unspaced).
std::string slice_count(const std::string& bound, int start, int step, bool spaced) {
  const std::string sp = spaced ? " " : "";
  if (step == 1)
    return start == 0 ? bound : "(" + bound + sp + "-" + sp + std::to_string(start) + ")";
  int d = step - 1 - start;
  std::string in = d == 0 ? bound : bound + sp + (d > 0 ? "+" : "-") + sp + std::to_string(d > 0 ? d : -d);
  return "(" + (d == 0 ? in : "(" + in + ")") + sp + "/" + sp + std::to_string(step) + ")";
}
std::string numpy_slice(int start, int step) {
  return (start == 0 ? "" : std::to_string(start)) + (step == 1 ? ":" : "::" + std::to_string(step));
}

std::string kernel_text(const std::string& params, const std::string& pre, const std::string& total,
                        const std::string& body) {
  return "__global__ void gen_kernel(" + params + ") {\n" + pre
         + "  long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n  if (o >= " + total
         + ") return;\n" + body + "}\n";
}

parts render_layout(const gen_op& op, rng& r) {
  parts p;
  p.level = 1;
  p.category = "layout";
  const bool copy = is_copy(op.map);
  p.atol = copy ? 0 : 1e-5;
  p.rtol = copy ? 0 : 1e-5;
  range_t rg = r.pick(std::vector<range_t>{{-1, 1}, {-2, 2}, {0, 4}});
  auto mp = [&](const std::string& e) { return prose(op.map, {{"v", e}}); };
  auto mc = [&](const std::string& e) { return cuda(op.map, {{"v", e}}); };
  auto defs = definitions({&op.map});
  const std::string exact = copy ? "; values are copied exactly." : ".";
  std::ostringstream d;
  std::string params, call, total, pre, body;
  auto size_text = [&](const std::vector<std::string>& names) {
    std::string s;
    for (std::size_t i = 0; i < names.size(); ++i)
      s += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i] + " = " + std::to_string(p.sizes[1].at(names[i]));
    return s;
  };
  if (op.variant == "transpose") {
    p.args = {{"x", "const float*", "input", "rows*cols", uniform(rg)}, {"y", "float*", "output", "rows*cols", ""},
              {"rows", "int", "", "", ""}, {"cols", "int", "", "", ""}};
    p.sizes = {{{"rows", r.pick(std::vector<int>{256, 512})}, {"cols", r.pick(std::vector<int>{384, 640})}},
               {{"rows", odd_size(r, 101, 399)}, {"cols", odd_size(r, 101, 399)}}};
    p.sample = {{"rows", 13}, {"cols", 29}};
    d << r.pick(std::vector<std::string>{"Matrix transpose", "Transpose a matrix", "Swap the rows and columns of a matrix"})
      << (copy ? "" : ", transforming every element") << ": x is rows x cols and y is cols x rows, both row-major "
      << "(y[j, i] is y[j * rows + i]); for every 0 <= i < rows and 0 <= j < cols,\ny[j, i] = " << mp("x[i, j]") << ".\n";
    params = "const float* x, float* y, int rows, int cols";
    call = "x, y, rows, cols";
    total = "(long long)rows * cols";
    body = "  const int j = (int)(o / rows), i = (int)(o % rows);\n  y[o] = (float)" + mc("(double)x[(long long)i * cols + j]") + ";\n";
    if (!defs.empty())
      d << defs << " ";
    d << "x lies in [" << num(rg.lo) << ", " << num(rg.hi) << "]. rows and cols are arbitrary positive ints, not multiples of a tile size (one test uses "
      << p.sizes[1]["rows"] << " x " << p.sizes[1]["cols"] << ")" << exact;
  } else if (op.variant == "permute") {
    const std::vector<std::string> dims{"A", "B", "C"}, idx{"i", "j", "k"};
    std::vector<int> pm;
    for (char ch : op.perm)
      pm.push_back(ch - '0');
    p.args = {{"x", "const float*", "input", "A*B*C", uniform(rg)}, {"y", "float*", "output", "A*B*C", ""},
              {"A", "int", "", "", ""}, {"B", "int", "", "", ""}, {"C", "int", "", "", ""}};
    p.sizes = {{{"A", 8}, {"B", 48}, {"C", 128}},
               {{"A", odd_size(r, 5, 13)}, {"B", odd_size(r, 33, 99)}, {"C", odd_size(r, 101, 199)}}};
    p.sample = {{"A", 3}, {"B", 5}, {"C", 7}};
    std::string yshape, yidx, torch_perm;
    for (int q = 0; q < 3; ++q) {
      yshape += (q ? " x " : "") + dims[static_cast<std::size_t>(pm[static_cast<std::size_t>(q)])];
      yidx += (q ? ", " : "") + idx[static_cast<std::size_t>(pm[static_cast<std::size_t>(q)])];
      torch_perm += (q ? ", " : "") + std::to_string(pm[static_cast<std::size_t>(q)]);
    }
    d << r.pick(std::vector<std::string>{"Permute the axes of a 3-D tensor", "3-D axis permutation", "Reorder the dimensions of a 3-D array"})
      << " (as x.permute(" << torch_perm << ")" << (copy ? "" : ", then an elementwise map") << "): x is A x B x C and y is " << yshape
      << ", both row-major (contiguous, last index fastest); for every 0 <= i < A, 0 <= j < B and 0 <= k < C,\ny[" << yidx
      << "] = " << mp("x[i, j, k]") << ".\n";
    if (!defs.empty())
      d << defs << " ";
    d << "x lies in [" << num(rg.lo) << ", " << num(rg.hi) << "]. No size is a multiple of a tile size in one test ("
      << size_text({"A", "B", "C"}) << ")" << exact;
    params = "const float* x, float* y, int A, int B, int C";
    call = "x, y, A, B, C";
    total = "(long long)A * B * C";
    const std::string n1 = dims[static_cast<std::size_t>(pm[1])], n2 = dims[static_cast<std::size_t>(pm[2])];
    body = "  const int o2 = (int)(o % " + n2 + "), o1 = (int)((o / " + n2 + ") % " + n1 + "), o0 = (int)(o / ((long long)"
           + n1 + " * " + n2 + "));\n";
    std::string coord[3];
    for (int q = 0; q < 3; ++q)
      coord[pm[static_cast<std::size_t>(q)]] = "o" + std::to_string(q);
    body += "  const int i = " + coord[0] + ", j = " + coord[1] + ", k = " + coord[2] + ";\n";
    body += "  y[o] = (float)" + mc("(double)x[((long long)i * B + j) * C + k]") + ";\n";
  } else if (op.variant == "gather_rows" || op.variant == "gather_cols") {
    p.level = 2;
    p.category = "indexing";
    const bool rows = op.variant == "gather_rows";
    if (rows)
      p.sizes = {{{"rows", 128}, {"cols", 512}, {"n", 384}},
                 {{"rows", odd_size(r, 101, 127)}, {"cols", odd_size(r, 301, 999)}, {"n", odd_size(r, 101, 399)}}};
    else
      p.sizes = {{{"rows", 256}, {"cols", 128}, {"n", 384}},
                 {{"rows", odd_size(r, 101, 399)}, {"cols", odd_size(r, 101, 127)}, {"n", odd_size(r, 101, 399)}}};
    const std::string src = rows ? "rows" : "cols";
    const long long hi = std::min(p.sizes[0][src], p.sizes[1][src]) - 1;
    p.args = {{"x", "const float*", "input", "rows*cols", uniform(rg)},
              {"idx", "const int*", "input", "n", "randint(0, " + std::to_string(hi) + ")"},
              {"out", "float*", "output", rows ? "n*cols" : "rows*n", ""},
              {"rows", "int", "", "", ""}, {"cols", "int", "", "", ""}, {"n", "int", "", "", ""}};
    p.sample = rows ? env::size_set{{"rows", hi + 1}, {"cols", 7}, {"n", 23}} : env::size_set{{"rows", 5}, {"cols", hi + 1}, {"n", 31}};
    if (rows)
      d << r.pick(std::vector<std::string>{"Gather rows by index", "Row gather (an embedding-style lookup)", "Select rows of a matrix by an index array"})
        << (copy ? " (as torch.index_select(x, 0, idx))" : ", transforming every element")
        << ": x is rows x cols, idx holds n int32 row indices, each in [0, rows) (indices repeat and come in no particular order), and out is n x cols, all row-major; for every 0 <= i < n and 0 <= j < cols,\nout[i, j] = "
        << mp("x[idx[i], j]") << ".\n";
    else
      d << r.pick(std::vector<std::string>{"Gather columns by index", "Column gather", "Select columns of a matrix by an index array"})
        << (copy ? " (as torch.index_select(x, 1, idx))" : ", transforming every element")
        << ": x is rows x cols, idx holds n int32 column indices, each in [0, cols) (indices repeat and come in no particular order), and out is rows x n, all row-major; for every 0 <= r < rows and 0 <= i < n,\nout[r, i] = "
        << mp("x[r, idx[i]]") << ".\n";
    if (!defs.empty())
      d << defs << " ";
    d << "x lies in [" << num(rg.lo) << ", " << num(rg.hi) << "]. The sizes are not multiples of a block or tile size in one test ("
      << size_text({"rows", "cols", "n"}) << ")" << exact;
    params = "const float* x, const int* idx, float* out, int rows, int cols, int n";
    call = "x, idx, out, rows, cols, n";
    if (rows) {
      total = "(long long)n * cols";
      body = "  const int i = (int)(o / cols), j = (int)(o % cols);\n  out[o] = (float)" + mc("(double)x[(long long)idx[i] * cols + j]") + ";\n";
    } else {
      total = "(long long)rows * n";
      body = "  const int r = (int)(o / n), i = (int)(o % n);\n  out[o] = (float)" + mc("(double)x[(long long)r * cols + idx[i]]") + ";\n";
    }
  } else if (op.variant == "slice") {
    const std::string orow = slice_count("rows", op.start0, op.step0, false), ocol = slice_count("cols", op.start1, op.step1, false);
    p.args = {{"x", "const float*", "input", "rows*cols", uniform(rg)}, {"y", "float*", "output", orow + "*" + ocol, ""},
              {"rows", "int", "", "", ""}, {"cols", "int", "", "", ""}};
    p.sizes = {{{"rows", r.pick(std::vector<int>{256, 512})}, {"cols", r.pick(std::vector<int>{512, 768})}},
               {{"rows", odd_size(r, 101, 399)}, {"cols", odd_size(r, 301, 999)}}};
    p.sample = {{"rows", 17}, {"cols", 23}};
    auto strip = [](std::string t) { return t.size() > 2 && t.front() == '(' && t.back() == ')' ? t.substr(1, t.size() - 2) : t; };
    d << r.pick(std::vector<std::string>{"Strided slice of a matrix", "Copy a strided sub-matrix", "Take every few rows and columns"})
      << " (as x[" << numpy_slice(op.start0, op.step0) << ", " << numpy_slice(op.start1, op.step1) << "] in NumPy"
      << (copy ? "" : ", then an elementwise map") << "): x is rows x cols and y is OR x OC, both row-major, with OR = "
      << strip(slice_count("rows", op.start0, op.step0, true)) << " and OC = " << strip(slice_count("cols", op.start1, op.step1, true))
      << " (integer division: y keeps the rows " << op.start0 << ", " << op.start0 + op.step0 << ", " << op.start0 + 2 * op.step0
      << ", ... that are below rows and the columns " << op.start1 << ", " << op.start1 + op.step1 << ", " << op.start1 + 2 * op.step1
      << ", ... that are below cols); for every 0 <= i < OR and 0 <= j < OC,\ny[i, j] = "
      << mp("x[" + affine(op.start0, op.step0, "i") + ", " + affine(op.start1, op.step1, "j") + "]") << ".\n";
    if (!defs.empty())
      d << defs << " ";
    d << "x lies in [" << num(rg.lo) << ", " << num(rg.hi) << "]. rows and cols are not multiples of a tile size in one test ("
      << size_text({"rows", "cols"}) << ")" << exact;
    params = "const float* x, float* y, int rows, int cols";
    call = "x, y, rows, cols";
    pre = "  const int OR = " + orow + ", OC = " + ocol + ";\n";
    total = "(long long)OR * OC";
    body = "  const int i = (int)(o / OC), j = (int)(o % OC);\n  y[o] = (float)"
           + mc("(double)x[(long long)(" + affine(op.start0, op.step0, "i") + ") * cols + " + affine(op.start1, op.step1, "j") + "]") + ";\n";
  } else { // concat
    range_t rb = rg.lo == -1 ? range_t{2, 3} : range_t{-1, 1};
    const bool by_rows = op.axis == "row";
    if (by_rows) {
      p.args = {{"a", "const float*", "input", "ra*cols", uniform(rg)}, {"b", "const float*", "input", "rb*cols", uniform(rb)},
                {"y", "float*", "output", "(ra+rb)*cols", ""}, {"ra", "int", "", "", ""}, {"rb", "int", "", "", ""}, {"cols", "int", "", "", ""}};
      p.sizes = {{{"ra", 128}, {"rb", 256}, {"cols", 512}},
                 {{"ra", odd_size(r, 33, 199)}, {"rb", odd_size(r, 33, 199)}, {"cols", odd_size(r, 301, 999)}}};
      p.sample = {{"ra", 5}, {"rb", 7}, {"cols", 13}};
      d << r.pick(std::vector<std::string>{"Stack two matrices vertically", "Concatenate along rows", "Join two matrices one above the other"})
        << (copy ? " (as torch.cat((a, b), dim=0))" : ", transforming every element")
        << ": a is ra x cols, b is rb x cols and y is (ra + rb) x cols, all row-major; for every column 0 <= j < cols,\ny[i, j] = "
        << mp("a[i, j]") << " for 0 <= i < ra and y[i, j] = " << mp("b[i - ra, j]") << " for ra <= i < ra + rb.\n";
      if (!defs.empty())
        d << defs << " ";
      d << "a lies in [" << num(rg.lo) << ", " << num(rg.hi) << "] and b in [" << num(rb.lo) << ", " << num(rb.hi)
        << "]. The sizes are not multiples of a tile size in one test (" << size_text({"ra", "rb", "cols"}) << ")" << exact;
      params = "const float* a, const float* b, float* y, int ra, int rb, int cols";
      call = "a, b, y, ra, rb, cols";
      total = "(long long)(ra + rb) * cols";
      body = "  const int i = (int)(o / cols), j = (int)(o % cols);\n"
             "  const double v = i < ra ? (double)a[(long long)i * cols + j] : (double)b[(long long)(i - ra) * cols + j];\n"
             "  y[o] = (float)" + mc("v") + ";\n";
    } else {
      p.args = {{"a", "const float*", "input", "rows*ca", uniform(rg)}, {"b", "const float*", "input", "rows*cb", uniform(rb)},
                {"y", "float*", "output", "rows*(ca+cb)", ""}, {"rows", "int", "", "", ""}, {"ca", "int", "", "", ""}, {"cb", "int", "", "", ""}};
      p.sizes = {{{"rows", 256}, {"ca", 384}, {"cb", 128}},
                 {{"rows", odd_size(r, 101, 299)}, {"ca", odd_size(r, 101, 399)}, {"cb", odd_size(r, 33, 199)}}};
      p.sample = {{"rows", 5}, {"ca", 13}, {"cb", 7}};
      d << r.pick(std::vector<std::string>{"Place two matrices side by side", "Concatenate along columns", "Join two matrices left and right"})
        << (copy ? " (as torch.cat((a, b), dim=1))" : ", transforming every element")
        << ": a is rows x ca, b is rows x cb and y is rows x (ca + cb), all row-major; for every row 0 <= r < rows,\ny[r, j] = "
        << mp("a[r, j]") << " for 0 <= j < ca and y[r, j] = " << mp("b[r, j - ca]") << " for ca <= j < ca + cb.\n";
      if (!defs.empty())
        d << defs << " ";
      d << "a lies in [" << num(rg.lo) << ", " << num(rg.hi) << "] and b in [" << num(rb.lo) << ", " << num(rb.hi)
        << "]. The sizes are not multiples of a tile size in one test (" << size_text({"rows", "ca", "cb"}) << ")" << exact;
      params = "const float* a, const float* b, float* y, int rows, int ca, int cb";
      call = "a, b, y, rows, ca, cb";
      total = "(long long)rows * (ca + cb)";
      body = "  const int w = ca + cb;\n  const int r = (int)(o / w), j = (int)(o % w);\n"
             "  const double v = j < ca ? (double)a[(long long)r * ca + j] : (double)b[(long long)r * cb + (j - ca)];\n"
             "  y[o] = (float)" + mc("v") + ";\n";
    }
  }
  p.description = d.str();
  p.kernels = kernel_text(params, pre, total, body);
  // The launch: one thread per output element.
  std::string sizes_ok;
  for (auto& a : p.args)
    if (a.ctype == "int")
      sizes_ok += (sizes_ok.empty() ? "" : " || ") + a.name + " <= 0";
  std::string count = total;
  if (op.variant == "slice")
    count = "(" + slice_count("rows", op.start0, op.step0, false) + ") * (" + slice_count("cols", op.start1, op.step1, false) + ")";
  p.launch = "  if (" + sizes_ok + ") return;\n" + launch_1d("gen_kernel", count, call);
  return p;
}

// ---- stencil: 3x3 stencils with a border rule, 2-D pooling ----

std::string stencil_formula(const std::string& v) {
  if (v == "box") return "(the sum of N(a, b) over a, b in {-1, 0, 1}) / 9 (the mean of the 3x3 neighbourhood)";
  if (v == "gauss")
    return "(N(-1, -1) + 2 * N(-1, 0) + N(-1, 1) + 2 * N(0, -1) + 4 * N(0, 0) + 2 * N(0, 1) + N(1, -1) + 2 * N(1, 0) + N(1, 1)) / 16 (a 3x3 Gaussian blur)";
  if (v == "cross") return "(N(0, 0) + N(-1, 0) + N(1, 0) + N(0, -1) + N(0, 1)) / 5 (the mean of the pixel and its 4 direct neighbours)";
  if (v == "laplace4") return "N(-1, 0) + N(1, 0) + N(0, -1) + N(0, 1) - 4 * N(0, 0) (a 4-neighbour Laplacian)";
  if (v == "laplace8") return "(the sum of the 8 neighbours N(a, b) with (a, b) != (0, 0)) - 8 * N(0, 0) (an 8-neighbour Laplacian)";
  if (v == "sharpen") return "5 * N(0, 0) - N(-1, 0) - N(1, 0) - N(0, -1) - N(0, 1) (a sharpening filter)";
  if (v == "sobel_x") return "N(-1, 1) + 2 * N(0, 1) + N(1, 1) - N(-1, -1) - 2 * N(0, -1) - N(1, -1) (a horizontal Sobel gradient)";
  return "N(1, -1) + 2 * N(1, 0) + N(1, 1) - N(-1, -1) - 2 * N(-1, 0) - N(-1, 1) (a vertical Sobel gradient)";
}

parts render_stencil(const gen_op& op, rng& r) {
  parts p;
  p.level = 2;
  range_t rg = r.pick(std::vector<range_t>{{-1, 1}, {0, 1}, {-2, 2}});
  std::ostringstream d;
  std::string pre, body, total = "(long long)C * OH * OW";
  auto size_note = [&] {
    return "H and W are not multiples of a tile size in one test (C = " + std::to_string(p.sizes[1]["C"]) + ", H = "
           + std::to_string(p.sizes[1]["H"]) + ", W = " + std::to_string(p.sizes[1]["W"]) + ").";
  };
  if (op.variant == "pool2d") {
    p.category = "pooling";
    const int k = op.window, s = op.stride;
    const std::string oh = "((H-" + std::to_string(k) + ")/" + std::to_string(s) + "+1)";
    const std::string ow = "((W-" + std::to_string(k) + ")/" + std::to_string(s) + "+1)";
    p.args = {{"x", "const float*", "input", "C*H*W", uniform(rg)}, {"y", "float*", "output", "C*" + oh + "*" + ow, ""},
              {"C", "int", "", "", ""}, {"H", "int", "", "", ""}, {"W", "int", "", "", ""}};
    p.sizes = {{{"C", 8}, {"H", 128}, {"W", 160}}, {{"C", odd_size(r, 5, 13)}, {"H", odd_size(r, 61, 199)}, {"W", odd_size(r, 61, 299)}}};
    p.sample = {{"C", 2}, {"H", 11}, {"W", 14}};
    p.atol = 1e-5;
    p.rtol = 1e-5;
    const std::string w = "x[c, i * " + std::to_string(s) + " + a, j * " + std::to_string(s) + " + b]";
    const std::string red = op.reduce == "max" ? "the largest of " + w
                          : op.reduce == "min" ? "the smallest of " + w
                          : op.reduce == "avg" ? "the mean of " + w + " (the sum divided by " + std::to_string(k * k) + ")"
                          : op.reduce == "sum" ? "the sum of " + w
                          : op.reduce == "l2"  ? "sqrt of the sum of (" + w + ")^2"
                                               : "the largest |" + w + "|";
    const std::string kind = op.reduce == "avg" ? "average" : op.reduce == "l2" ? "L2" : op.reduce == "linf" ? "max-abs" : op.reduce;
    d << r.pick(std::vector<std::string>{"2-D " + kind + " pooling over each channel", "Windowed " + kind + " reduction over 2-D windows",
                                         "Pool every channel of an image with " + std::to_string(k) + " x " + std::to_string(k) + " windows"})
      << " (batch 1, no padding): x is C x H x W and y is C x OH x OW with OH = (H - " << k << ") / " << s << " + 1 and OW = (W - "
      << k << ") / " << s << " + 1 (integer division; trailing rows and columns that do not fill a window are dropped), all row-major. "
      << "The window is " << k << " x " << k << " and moves by " << s << " in both directions:\ny[c, i, j] = " << red
      << " over 0 <= a, b < " << k << ".\n";
    d << (s < k ? "Windows overlap. " : s > k ? "Windows skip some rows and columns. " : "Windows tile the image. ")
      << "x lies in [" << num(rg.lo) << ", " << num(rg.hi) << "]. " << size_note();
    pre = "  const int OH = (H - " + std::to_string(k) + ") / " + std::to_string(s) + " + 1, OW = (W - " + std::to_string(k) + ") / "
          + std::to_string(s) + " + 1;\n";
    std::ostringstream b;
    b << "  const int c = (int)(o / ((long long)OH * OW)), i = (int)((o / OW) % OH), j = (int)(o % OW);\n"
      << "  double acc = 0.0;\n  for (int a = 0; a < " << k << "; ++a)\n    for (int b = 0; b < " << k << "; ++b) {\n"
      << "      const double v = (double)x[((long long)c * H + i * " << s << " + a) * W + j * " << s << " + b];\n";
    if (op.reduce == "max") b << "      if ((a == 0 && b == 0) || v > acc) acc = v;\n";
    else if (op.reduce == "min") b << "      if ((a == 0 && b == 0) || v < acc) acc = v;\n";
    else if (op.reduce == "l2") b << "      acc += v * v;\n";
    else if (op.reduce == "linf") b << "      if (fabs(v) > acc) acc = fabs(v);\n";
    else b << "      acc += v;\n";
    b << "    }\n";
    if (op.reduce == "avg") b << "  acc /= " << k * k << ".0;\n";
    if (op.reduce == "l2") b << "  acc = sqrt(acc);\n";
    b << "  y[o] = (float)acc;\n";
    body = b.str();
    p.kernels = kernel_text("const float* x, float* y, int C, int H, int W", pre, total, body);
    p.launch = "  if (C <= 0 || H < " + std::to_string(k) + " || W < " + std::to_string(k) + ") return;\n"
               + launch_1d("gen_kernel", "C * " + oh + " * " + ow, "x, y, C, H, W");
    p.description = d.str();
    return p;
  }
  p.category = "convolution";
  const bool valid = op.border == "valid";
  p.args = {{"x", "const float*", "input", "C*H*W", uniform(rg)}, {"y", "float*", "output", valid ? "C*(H-2)*(W-2)" : "C*H*W", ""},
            {"C", "int", "", "", ""}, {"H", "int", "", "", ""}, {"W", "int", "", "", ""}};
  p.sizes = {{{"C", 4}, {"H", 192}, {"W", 256}}, {{"C", odd_size(r, 3, 7)}, {"H", odd_size(r, 67, 199)}, {"W", odd_size(r, 101, 299)}}};
  p.sample = {{"C", 2}, {"H", 9}, {"W", 13}};
  p.atol = 1e-4;
  p.rtol = 1e-4;
  const bool copy = is_copy(op.map);
  d << r.pick(std::vector<std::string>{"3x3 stencil over each channel", "A 3x3 neighbourhood filter on every image plane",
                                       "2-D stencil, one image per channel"})
    << ": x is C x H x W (C images of H rows and W columns) and y is " << (valid ? "C x (H - 2) x (W - 2)" : "C x H x W")
    << ", both row-major. For every channel c and position (i, j) of y let N(a, b) = "
    << (valid ? "x[c, i + 1 + a, j + 1 + b]" : "x[c, i + a, j + b]") << ", the neighbour a rows down and b columns right of "
    << (valid ? "x[c, i + 1, j + 1]" : "x[c, i, j]") << " (a, b in {-1, 0, 1}), and\nv = " << stencil_formula(op.variant) << ";\nthen y[c, i, j] = "
    << (copy ? "v" : prose(op.map, {{"v", "v"}})) << ".\n";
  if (op.border == "zero")
    d << "Border rule: neighbours outside the image count as 0 (zero padding), i.e. N(a, b) = 0 when i + a is outside [0, H) or j + b is outside [0, W). ";
  else if (op.border == "clamp")
    d << "Border rule: a neighbour outside the image reads the nearest edge pixel (replicate padding): its row index is clamped to [0, H - 1] and its column index to [0, W - 1]. ";
  else if (op.border == "mirror")
    d << "Border rule: a neighbour outside the image is reflected about the edge without repeating the edge (reflect padding): row -1 reads row 1 and row H reads row H - 2, likewise column -1 reads column 1 and column W reads column W - 2. ";
  else
    d << "Border rule: only positions whose whole 3x3 neighbourhood lies inside x are computed (no padding), so y is 2 rows and 2 columns smaller than x. ";
  auto defs = definitions({&op.map});
  if (!defs.empty())
    d << defs << " ";
  d << "x lies in [" << num(rg.lo) << ", " << num(rg.hi) << "]. " << size_note();
  p.description = d.str();
  pre = valid ? "  const int OH = H - 2, OW = W - 2;\n" : "  const int OH = H, OW = W;\n";
  auto w = stencil_weights(op.variant);
  std::string wl;
  for (std::size_t q = 0; q < w.size(); ++q)
    wl += (q ? ", " : "") + cnum(w[q]);
  std::ostringstream b;
  b << "  const int c = (int)(o / ((long long)OH * OW)), i = (int)((o / OW) % OH), j = (int)(o % OW);\n"
    << "  const double w[9] = {" << wl << "};\n  double v = 0.0;\n  for (int a = -1; a <= 1; ++a)\n    for (int b = -1; b <= 1; ++b) {\n"
    << (valid ? "      int rr = i + 1 + a, cc = j + 1 + b;\n" : "      int rr = i + a, cc = j + b;\n");
  if (op.border == "zero")
    b << "      if (rr < 0 || rr > H - 1 || cc < 0 || cc > W - 1) continue;\n";
  else if (op.border == "clamp")
    b << "      rr = rr < 0 ? 0 : (rr > H - 1 ? H - 1 : rr);\n      cc = cc < 0 ? 0 : (cc > W - 1 ? W - 1 : cc);\n";
  else if (op.border == "mirror")
    b << "      rr = rr < 0 ? -rr : (rr > H - 1 ? 2 * H - 2 - rr : rr);\n      cc = cc < 0 ? -cc : (cc > W - 1 ? 2 * W - 2 - cc : cc);\n";
  b << "      v += w[(a + 1) * 3 + (b + 1)] * (double)x[((long long)c * H + rr) * W + cc];\n    }\n";
  b << "  y[o] = (float)" << cuda(op.map, {{"v", "v"}}) << ";\n";
  body = b.str();
  p.kernels = kernel_text("const float* x, float* y, int C, int H, int W", pre, total, body);
  p.launch = std::string("  if (C <= 0 || H < ") + (valid ? "3" : "2") + " || W < " + (valid ? "3" : "2") + ") return;\n"
             + launch_1d("gen_kernel", valid ? "C * (H - 2) * (W - 2)" : "C * H * W", "x, y, C, H, W");
  return p;
}

parts render_parts(const gen_op& op, rng& r, style st, rng* wording) {
  switch (op.fam) {
    case family::ew: return render_ew(op, r, st, wording);
    case family::red: return render_red(op, r);
    case family::bcast: return render_bcast(op, r);
    case family::softmax: return render_softmax(op, r);
    case family::scan: return render_scan(op, r);
    case family::pool: return render_pool(op, r);
    case family::matmul: return render_matmul(op, r);
    case family::layout: return render_layout(op, r);
    case family::stencil: return render_stencil(op, r);
  }
  return {};
}

// Wraps prose at about 100 columns (the suite's width).

} // namespace leap::taskgen::detail
