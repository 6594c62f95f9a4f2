//! Codegen checks of `warpsafe::warp`'s raw collectives, on the test kernels of
//! `tests/kernels/warp` built for sm_70, sm_80 and sm_90; no GPU needed.
//!
//! - each collective lowers to the intended PTX instruction, inside the kernel that uses it;
//! - `redux.sync` appears only from sm_80 and `elect.sync` only on sm_90, with their
//!   sm_70 fallbacks elsewhere;
//! - ptxas assembles every architecture's PTX with no spill;
//! - in the optimised LLVM IR, no collective was hoisted or sunk out of the divergent
//!   branch that guards it, and every collective intrinsic is declared `convergent`.

use std::collections::{HashMap, HashSet};

use warpsafe_tests::{assemble, kernel_body, test_llvm_ir, test_ptx};

const SMS: [u32; 3] = [70, 80, 90];

/// `(kernel name suffix, bytes)` of every type the shuffle kernels move.
const SHUFFLE_TYPES: [(&str, usize); 8] =
    [("u8", 1), ("i16", 2), ("u32", 4), ("i64", 8), ("u128", 16), ("f32", 4), ("f64", 8), ("tagged12", 12)];

/// `(kernel name mode, PTX mode)`.
const SHUFFLE_MODES: [(&str, &str); 4] = [("idx", "idx"), ("up", "up"), ("down", "down"), ("xor", "bfly")];

/// The PTX body of `kernel` in the warp test kernels for `sm_<sm>`.
fn body(sm: u32, kernel: &str) -> &'static str {
    kernel_body(test_ptx("warp", sm), kernel)
}

fn assert_contains(sm: u32, kernel: &str, instruction: &str) {
    assert!(
        body(sm, kernel).contains(instruction),
        "sm_{sm} {kernel}: no `{instruction}` in\n{}",
        body(sm, kernel)
    );
}

fn assert_lacks(sm: u32, kernel: &str, instruction: &str) {
    assert!(
        !body(sm, kernel).contains(instruction),
        "sm_{sm} {kernel}: unexpected `{instruction}` in\n{}",
        body(sm, kernel)
    );
}

#[test]
fn shuffles_lower_to_one_shfl_sync_per_32_bit_word_in_every_mode() {
    for sm in SMS {
        for (mode, ptx_mode) in SHUFFLE_MODES {
            for (ty, bytes) in SHUFFLE_TYPES {
                let kernel = format!("warp_shfl_{mode}_{ty}");
                let text = body(sm, &kernel);
                let words = bytes.div_ceil(4);
                let instruction = format!("shfl.sync.{ptx_mode}.b32");
                let lines: Vec<&str> = text.lines().filter(|l| l.contains("shfl.sync")).collect();
                // The plain and the `_p` shuffle, one instruction per word each, all of
                // this mode.
                assert_eq!(lines.len(), 2 * words, "sm_{sm} {kernel}:\n{text}");
                assert!(lines.iter().all(|l| l.contains(&instruction)), "sm_{sm} {kernel}:\n{text}");
                // The `_p` words ask for the predicate (`d|p`), the plain ones do not.
                let with_predicate = lines.iter().filter(|l| l.contains('|')).count();
                assert_eq!(with_predicate, words, "sm_{sm} {kernel}:\n{text}");
                // The words stay in registers: no stack round trip, no bounds-check trap.
                assert!(!text.contains(".local"), "sm_{sm} {kernel} uses local memory:\n{text}");
                assert!(!text.contains("trap"), "sm_{sm} {kernel} can trap:\n{text}");
            }
        }
    }
}

#[test]
fn shuffle_c_operand_packs_the_segment_mask_and_clamp() {
    // Width 8: segment mask (32 - 8) << 8 = 6144; clamp 31 for idx/down/bfly, 0 for up.
    for sm in SMS {
        let text = body(sm, "warp_shfl_width8");
        let operands = |mode: &str| -> Vec<String> {
            text.lines()
                .filter(|l| l.contains(&format!("shfl.sync.{mode}.b32")))
                .map(|l| l.split(',').map(|s| s.trim().trim_end_matches(';').to_string()).collect::<Vec<_>>())
                .map(|ops| ops[2..].join(", "))
                .collect()
        };
        assert_eq!(operands("idx"), ["3, 6175, -1"], "sm_{sm}:\n{text}");
        assert_eq!(operands("up"), ["1, 6144, -1"], "sm_{sm}:\n{text}");
        assert_eq!(operands("down"), ["2, 6175, -1"], "sm_{sm}:\n{text}");
        assert_eq!(operands("bfly"), ["4, 6175, -1"], "sm_{sm}:\n{text}");
        // Width 32 (the even/odd kernel): segment mask 0, clamp 31, and the two masks.
        let even_odd = body(sm, "warp_its_even_odd");
        let bfly: Vec<&str> = even_odd.lines().filter(|l| l.contains("shfl.sync.bfly.b32")).collect();
        assert_eq!(bfly.len(), 2, "sm_{sm}:\n{even_odd}");
        assert!(bfly.iter().any(|l| l.contains(", 2, 31, 1431655765;")), "sm_{sm}:\n{even_odd}");
        assert!(bfly.iter().any(|l| l.contains(", 2, 31, -1431655766;")), "sm_{sm}:\n{even_odd}");
    }
}

#[test]
fn votes_activemask_and_lanemasks_lower_to_their_instructions() {
    for sm in SMS {
        for instruction in [
            "vote.sync.ballot.b32",
            "vote.sync.any.pred",
            "vote.sync.all.pred",
            "vote.sync.uni.pred",
            "activemask.b32",
        ] {
            assert_contains(sm, "warp_vote", instruction);
        }
        for mask in ["eq", "lt", "le", "gt", "ge"] {
            assert_contains(sm, "warp_lanes", &format!("%lanemask_{mask};"));
        }
        assert_contains(sm, "warp_lanes", "%laneid;");
        assert_contains(sm, "warp_fixpoint", "vote.sync.any.pred");
        assert_contains(sm, "warp_its_ballot_prefix", "vote.sync.ballot.b32");
    }
}

#[test]
fn match_lowers_to_b32_or_b64_by_value_size() {
    for sm in SMS {
        for (ty, bits) in [("u32", 32), ("i32", 32), ("f32", 32), ("u64", 64), ("i64", 64), ("f64", 64)] {
            let kernel = format!("warp_match_{ty}");
            let other = if bits == 32 { 64 } else { 32 };
            assert_contains(sm, &kernel, &format!("match.any.sync.b{bits}"));
            assert_contains(sm, &kernel, &format!("match.all.sync.b{bits}"));
            assert_lacks(sm, &kernel, &format!("sync.b{other}"));
        }
    }
}

#[test]
fn redux_sync_from_sm80_and_a_shuffle_tree_on_sm70() {
    let hardware = [
        "redux.sync.add.s32",
        "redux.sync.min.u32",
        "redux.sync.max.u32",
        "redux.sync.min.s32",
        "redux.sync.max.s32",
        "redux.sync.and.b32",
        "redux.sync.or.b32",
        "redux.sync.xor.b32",
    ];
    for instruction in hardware {
        assert_contains(80, "warp_redux", instruction);
        assert_contains(90, "warp_redux", instruction);
    }
    for sm in [80, 90] {
        assert_lacks(sm, "warp_redux", "shfl.sync");
        assert_contains(sm, "warp_its_ballot_prefix", "redux.sync.add.s32");
    }
    assert_lacks(70, "warp_redux", "redux.sync");
    assert_lacks(70, "warp_its_ballot_prefix", "redux.sync");
    // The fallback: a tree of indexed shuffles plus a broadcast, per reduction.
    assert!(body(70, "warp_redux").matches("shfl.sync.idx.b32").count() >= 16, "{}", body(70, "warp_redux"));
    assert_contains(70, "warp_its_ballot_prefix", "shfl.sync.idx.b32");
    // No other sm_70 kernel gains a redux.sync from anywhere.
    assert!(!test_ptx("warp", 70).contains("redux.sync"));
}

#[test]
fn elect_sync_only_on_sm90_with_a_ballot_fallback_before() {
    for kernel in ["warp_elect", "warp_elect_rounds"] {
        assert_contains(90, kernel, "elect.sync");
        for sm in [70, 80] {
            assert_lacks(sm, kernel, "elect.sync");
            assert_contains(sm, kernel, "vote.sync.ballot.b32");
        }
    }
    assert!(!test_ptx("warp", 70).contains("elect.sync"));
    assert!(!test_ptx("warp", 80).contains("elect.sync"));
}

#[test]
fn sync_warp_lowers_to_bar_warp_sync() {
    for sm in SMS {
        assert_contains(sm, "warp_fixpoint", "bar.warp.sync");
        assert_contains(sm, "warp_its_butterfly", "bar.warp.sync");
    }
}

#[test]
fn ptxas_assembles_every_arch_without_spills() {
    for sm in SMS {
        let report =
            assemble(test_ptx("warp", sm), sm).unwrap_or_else(|e| panic!("ptxas rejected sm_{sm}:\n{e}"));
        let spill_lines: Vec<&str> = report.lines().filter(|l| l.contains("spill")).collect();
        // One report per kernel at least.
        let kernels = test_ptx("warp", sm).matches(".entry ").count();
        assert!(
            spill_lines.len() >= kernels,
            "sm_{sm}: {} spill lines for {kernels} kernels:\n{report}",
            spill_lines.len()
        );
        for line in spill_lines {
            assert!(line.contains("0 bytes spill stores, 0 bytes spill loads"), "sm_{sm} spills: {line}");
        }
    }
}

// ---------------------------------------------------------------------------------------
// LLVM IR: collectives stay inside their divergent branches.
// ---------------------------------------------------------------------------------------

/// The NVVM intrinsics that are warp collectives.
const COLLECTIVES: [&str; 7] = [
    "@llvm.nvvm.shfl.sync.",
    "@llvm.nvvm.vote.",
    "@llvm.nvvm.match.",
    "@llvm.nvvm.redux.sync.",
    "@llvm.nvvm.bar.warp.sync",
    "@llvm.nvvm.elect.sync",
    "@llvm.nvvm.activemask",
];

/// Special registers that make a value differ between the lanes of a warp.
const LANE_SOURCES: [&str; 3] = [
    "@llvm.nvvm.read.ptx.sreg.laneid",
    "@llvm.nvvm.read.ptx.sreg.tid.",
    "@llvm.nvvm.read.ptx.sreg.lanemask.",
];

/// A basic block of an LLVM IR function: its name, its instruction lines, and the blocks
/// its terminator may jump to.
struct Block<'a> {
    name: String,
    lines: Vec<&'a str>,
    successors: Vec<String>,
}

/// The text of `define ... @name(...) { ... }` in `ir`.
fn function_ir<'a>(ir: &'a str, name: &str) -> &'a str {
    let start = ir
        .lines()
        .find(|l| l.starts_with("define ") && l.contains(&format!("@{name}(")))
        .map(|l| l.as_ptr() as usize - ir.as_ptr() as usize)
        .unwrap_or_else(|| panic!("no function @{name} in the IR"));
    let rest = &ir[start..];
    &rest[..rest.find("\n}\n").map_or(rest.len(), |e| e + 3)]
}

/// The `%names` (values or blocks) mentioned in `text`.
fn local_names(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find('%') {
        rest = &rest[at + 1..];
        let name: String = if let Some(quoted) = rest.strip_prefix('"') {
            quoted.split('"').next().unwrap_or("").to_string()
        } else {
            rest.chars().take_while(|c| c.is_ascii_alphanumeric() || "._-$".contains(*c)).collect()
        };
        if !name.is_empty() {
            names.push(name);
        }
    }
    names
}

/// Splits a function's text into basic blocks. Labels start at column 0 (`name:`, with an
/// optional `; preds = ...` comment); the unnamed entry block is called `<entry>`.
fn blocks(function: &str) -> Vec<Block<'_>> {
    let mut blocks: Vec<Block<'_>> = Vec::new();
    for line in function.lines().skip(1) {
        if line == "}" {
            break;
        }
        let label = line.split(';').next().unwrap_or("").trim_end();
        if !line.starts_with([' ', '\t']) && label.ends_with(':') {
            let name = label.trim_end_matches(':').trim_matches('"').to_string();
            blocks.push(Block { name, lines: Vec::new(), successors: Vec::new() });
            continue;
        }
        if line.trim().is_empty() {
            continue;
        }
        if blocks.is_empty() {
            blocks.push(Block { name: "<entry>".into(), lines: Vec::new(), successors: Vec::new() });
        }
        blocks.last_mut().unwrap().lines.push(line);
    }
    for block in &mut blocks {
        // Only terminators (br, switch, ...) name blocks after the keyword `label`.
        for line in &block.lines {
            for (i, _) in line.match_indices("label %") {
                if let Some(name) = local_names(&line[i + "label ".len()..]).into_iter().next() {
                    block.successors.push(name);
                }
            }
        }
    }
    blocks
}

/// Whether the value `%name` depends on a lane-varying special register, following its
/// definition's operands backwards through `defs` (value name -> defining line).
fn lane_dependent(name: &str, defs: &HashMap<String, &str>) -> bool {
    let mut seen = HashSet::new();
    let mut work = vec![name.to_string()];
    while let Some(value) = work.pop() {
        if !seen.insert(value.clone()) {
            continue;
        }
        let Some(line) = defs.get(&value) else { continue };
        if LANE_SOURCES.iter().any(|s| line.contains(s)) {
            return true;
        }
        let rhs = line.split_once('=').map_or("", |(_, r)| r);
        work.extend(local_names(rhs));
    }
    false
}

/// Whether block `target` is reachable from the entry when the edge `cut` is removed.
fn reachable_without(blocks: &[Block<'_>], target: &str, cut: (&str, &str)) -> bool {
    let index: HashMap<&str, &Block<'_>> = blocks.iter().map(|b| (b.name.as_str(), b)).collect();
    let mut seen = HashSet::new();
    let mut work = vec![blocks[0].name.as_str()];
    while let Some(name) = work.pop() {
        if !seen.insert(name) {
            continue;
        }
        if name == target {
            return true;
        }
        for next in &index[name].successors {
            if (name, next.as_str()) != cut {
                work.push(next.as_str());
            }
        }
    }
    false
}

/// Checks that every call in `function` to an intrinsic named by `which` sits in a block
/// that is reached only through one edge of a conditional branch on a lane-dependent
/// value: it was neither hoisted above nor sunk below that branch. Returns the number of
/// calls checked.
///
/// # Errors
/// The first unguarded call.
fn check_guarded(function: &str, which: &[&str]) -> Result<usize, String> {
    let blocks = blocks(function);
    let mut defs = HashMap::new();
    for line in blocks.iter().flat_map(|b| &b.lines) {
        if let Some((lhs, _)) = line.split_once(" = ") {
            if let Some(name) = lhs.trim().strip_prefix('%') {
                defs.insert(name.trim_matches('"').to_string(), *line);
            }
        }
    }
    // Edges (block, successor) leaving a conditional branch on a lane-dependent value.
    let mut lane_edges = Vec::new();
    for block in &blocks {
        let Some(term) = block.lines.last() else { continue };
        let Some(cond) = term.trim().strip_prefix("br i1 ") else { continue };
        let Some(value) = local_names(cond.split(',').next().unwrap_or("")).into_iter().next() else {
            continue;
        };
        if lane_dependent(&value, &defs) {
            for next in &block.successors {
                lane_edges.push((block.name.as_str(), next.as_str()));
            }
        }
    }
    let mut checked = 0;
    for block in &blocks {
        for line in &block.lines {
            if !line.contains("call ") || !which.iter().any(|w| line.contains(w)) {
                continue;
            }
            checked += 1;
            let guarded = lane_edges.iter().any(|&edge| !reachable_without(&blocks, &block.name, edge));
            if !guarded {
                return Err(format!(
                    "block {:?} runs for lanes on either side of every lane-dependent branch:\n{line}",
                    block.name
                ));
            }
        }
    }
    Ok(checked)
}

#[test]
fn collectives_stay_inside_their_divergent_branches() {
    let shuffle_kernels = SHUFFLE_MODES
        .iter()
        .flat_map(|(mode, _)| SHUFFLE_TYPES.iter().map(move |(ty, _)| format!("warp_shfl_{mode}_{ty}")));
    let match_kernels =
        ["u32", "i32", "f32", "u64", "i64", "f64"].iter().map(|ty| format!("warp_match_{ty}"));
    let divergent: Vec<String> = shuffle_kernels
        .chain(match_kernels)
        .chain(
            [
                "warp_vote",
                "warp_redux",
                "warp_elect",
                "warp_elect_rounds",
                "warp_its_even_odd",
                "warp_fixpoint",
            ]
            .map(String::from),
        )
        .collect();
    for sm in SMS {
        let ir = test_llvm_ir("warp", sm);
        for kernel in &divergent {
            let checked = check_guarded(function_ir(&ir, kernel), &COLLECTIVES)
                .unwrap_or_else(|e| panic!("sm_{sm} {kernel}: {e}"));
            assert!(checked > 0, "sm_{sm} {kernel}: no collective call found in the IR");
        }
        // The ballot runs in the full warp; the reduction inside `if has_data` only.
        let prefix = function_ir(&ir, "warp_its_ballot_prefix");
        let checked = check_guarded(prefix, &["@llvm.nvvm.redux.sync.", "@llvm.nvvm.shfl.sync."])
            .unwrap_or_else(|e| panic!("sm_{sm} warp_its_ballot_prefix: {e}"));
        assert!(checked > 0, "sm_{sm}: no reduction in warp_its_ballot_prefix");
        assert!(
            check_guarded(prefix, &["@llvm.nvvm.vote.ballot"]).is_err(),
            "the full-warp ballot looks guarded"
        );
        // The even and odd shuffles were not merged into one call with a selected mask.
        let even_odd = function_ir(&ir, "warp_its_even_odd");
        let bfly: Vec<&str> =
            even_odd.lines().filter(|l| l.contains("call i32 @llvm.nvvm.shfl.sync.bfly")).collect();
        assert_eq!(bfly.len(), 2, "sm_{sm}:\n{even_odd}");
        assert!(bfly.iter().any(|l| l.contains("(i32 1431655765,")), "sm_{sm}:\n{even_odd}");
        assert!(bfly.iter().any(|l| l.contains("(i32 -1431655766,")), "sm_{sm}:\n{even_odd}");
    }
}

#[test]
fn divergence_check_rejects_a_collective_moved_out_of_its_branch() {
    // The checks above are only worth something if they can say no.
    let shape = |then_call: &str, join_call: &str| {
        format!(
            "define ptx_kernel void @k(ptr %out) {{\n\
             start:\n  %lane = tail call i32 @llvm.nvvm.read.ptx.sreg.laneid()\n  \
             %c = icmp ult i32 %lane, 16\n  br i1 %c, label %then, label %join\n\n\
             then:                                             ; preds = %start\n  {then_call}\n  \
             br label %join\n\n\
             join:                                             ; preds = %then, %start\n  {join_call}\n  \
             ret void\n}}\n"
        )
    };
    let call = "%v = tail call i32 @llvm.nvvm.shfl.sync.idx.i32(i32 65535, i32 %lane, i32 0, i32 31)";
    let store = "store i32 1, ptr %out, align 4";
    assert_eq!(check_guarded(&shape(call, store), &COLLECTIVES), Ok(1));
    // Sunk into the join block.
    assert!(check_guarded(&shape(store, call), &COLLECTIVES).is_err());
    // Hoisted into the entry block.
    let hoisted = shape(store, store).replace("  br i1 %c", &format!("  {call}\n  br i1 %c"));
    assert!(check_guarded(&hoisted, &COLLECTIVES).is_err());
    // A branch on a value every lane shares guards nothing.
    let uniform = shape(call, store).replace("icmp ult i32 %lane, 16", "icmp ult i32 7, 16");
    assert!(check_guarded(&uniform, &COLLECTIVES).is_err());
}

#[test]
fn every_collective_intrinsic_is_declared_convergent() {
    for sm in SMS {
        let ir = test_llvm_ir("warp", sm);
        let groups: HashMap<&str, &str> = ir
            .lines()
            .filter_map(|l| l.strip_prefix("attributes #"))
            .filter_map(|l| l.split_once(" = "))
            .collect();
        let declarations: Vec<&str> = ir
            .lines()
            .filter(|l| l.starts_with("declare ") && COLLECTIVES.iter().any(|c| l.contains(c)))
            .collect();
        // 8 shfl (4 modes, with and without predicate), 4 votes, activemask, 4 matches,
        // bar.warp.sync, plus 8 redux.sync from sm_80 and elect.sync on sm_90.
        let expected = 8 + 4 + 1 + 4 + 1 + if sm >= 80 { 8 } else { 0 } + if sm >= 90 { 1 } else { 0 };
        assert_eq!(declarations.len(), expected, "sm_{sm}:\n{}", declarations.join("\n"));
        for declaration in declarations {
            let group = declaration.rsplit('#').next().unwrap_or("").trim();
            let attributes = groups.get(group).unwrap_or_else(|| panic!("sm_{sm}: no attributes #{group}"));
            assert!(attributes.contains("convergent"), "sm_{sm}: {declaration} has {attributes}");
        }
        // No collective hides in inline assembly.
        for line in ir.lines().filter(|l| l.contains(" asm ")) {
            assert!(
                !["shfl", "vote", "match", "redux", "bar.warp", "elect", "activemask"]
                    .iter()
                    .any(|c| line.contains(c)),
                "sm_{sm}: a collective in inline asm: {line}"
            );
        }
    }
}
