//! PTX checks (no GPU needed) for `warpsafe::{fence, atomic, barrier}`: every API lowers
//! to exactly the intended instruction, with the right scope, semantics and type suffix,
//! inside the kernel that calls it, and ptxas assembles the whole module for sm_70, sm_80
//! and sm_90 without spills.

use warpsafe_tests::{assemble, kernel_body, test_llvm_ir, test_ptx};

const ARCHS: [u32; 3] = [70, 80, 90];
const SCOPES: [(&str, &str); 3] = [("block", "cta"), ("device", "gpu"), ("system", "sys")];
const RMW_SEMS: [&str; 4] = ["relaxed", "acquire", "release", "acq_rel"];
const STORE_SEMS: [&str; 2] = ["relaxed", "release"];

/// The instructions of every `asm!` block in `body`, in order, whitespace normalised.
fn inline_asm(body: &str) -> Vec<String> {
    let mut inside = false;
    let mut out = Vec::new();
    for line in body.lines().map(str::trim) {
        match line {
            "// begin inline asm" => inside = true,
            "// end inline asm" => inside = false,
            _ if inside && !line.is_empty() => {
                out.push(line.split_whitespace().collect::<Vec<_>>().join(" "))
            }
            _ => {}
        }
    }
    out
}

/// The mnemonics (first word) of `instructions`.
fn mnemonics(instructions: &[String]) -> Vec<&str> {
    instructions.iter().map(|i| i.split_whitespace().next().unwrap_or("")).collect()
}

/// The lines of `body` whose instruction starts with `prefix`, whitespace normalised.
fn instructions_starting(body: &str, prefix: &str) -> Vec<String> {
    body.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|l| l.starts_with(prefix))
        .collect()
}

/// `atom.<sem>.<scope>.<op>.<ty>` for the four semantics, then `red.<sem>...` for two.
fn rmw_and_red(scope: &str, op: &str, ty: &str) -> Vec<String> {
    let mut v: Vec<String> = RMW_SEMS.iter().map(|s| format!("atom.{s}.{scope}.{op}.{ty}")).collect();
    v.extend(STORE_SEMS.iter().map(|s| format!("red.{s}.{scope}.{op}.{ty}")));
    v
}

fn loads_and_stores(scope: &str, bits: &str) -> Vec<String> {
    vec![
        format!("ld.relaxed.{scope}.{bits}"),
        format!("ld.acquire.{scope}.{bits}"),
        format!("st.relaxed.{scope}.{bits}"),
        format!("st.release.{scope}.{bits}"),
    ]
}

/// The expected mnemonics of `mem_probe_<ty>_<scope>` (see the kernel crate).
fn expected_int_probe(scope: &str, add: &str, minmax: &str, bits: &str) -> Vec<String> {
    let mut v = loads_and_stores(scope, bits);
    v.extend(rmw_and_red(scope, "add", add));
    v.extend(rmw_and_red(scope, "min", minmax));
    v.extend(rmw_and_red(scope, "max", minmax));
    v.extend(rmw_and_red(scope, "and", bits));
    v.extend(rmw_and_red(scope, "or", bits));
    v.extend(rmw_and_red(scope, "xor", bits));
    v.extend(RMW_SEMS.iter().map(|s| format!("atom.{s}.{scope}.exch.{bits}")));
    v.extend(RMW_SEMS.iter().map(|s| format!("atom.{s}.{scope}.cas.{bits}")));
    v
}

#[test]
fn integer_atomics_lower_to_atom_red_ld_st_with_scope_semantics_and_type() {
    // (type, add suffix, min/max suffix, bitwise/load/store suffix)
    let types = [
        ("u32", "u32", "u32", "b32"),
        ("i32", "s32", "s32", "b32"),
        ("u64", "u64", "u64", "b64"),
        // PTX has no atom.add.s64: i64 addition is u64 addition, bit for bit.
        ("i64", "u64", "s64", "b64"),
    ];
    for sm in ARCHS {
        let ptx = test_ptx("memory", sm);
        for (ty, add, minmax, bits) in types {
            for (name, scope) in SCOPES {
                let kernel = format!("mem_probe_{ty}_{name}");
                let asm = inline_asm(kernel_body(ptx, &kernel));
                let expected = expected_int_probe(scope, add, minmax, bits);
                assert_eq!(mnemonics(&asm), expected, "sm_{sm} {kernel}");
                // Generic addressing: one `[%rd..]` operand and no state space.
                for line in &asm {
                    assert!(
                        !line.contains(".global") && !line.contains(".shared"),
                        "sm_{sm} {kernel}: {line}"
                    );
                    assert_eq!(line.matches("[%rd").count(), 1, "sm_{sm} {kernel}: {line}");
                }
                // cas: destination, address, expected, new.
                for line in asm.iter().filter(|l| l.contains(".cas.")) {
                    assert_eq!(line.matches(',').count(), 3, "sm_{sm} {kernel}: {line}");
                }
                // red returns nothing: its first operand is the address.
                for line in asm.iter().filter(|l| l.starts_with("red.")) {
                    assert!(
                        line.split_whitespace().nth(1).unwrap().starts_with('['),
                        "sm_{sm} {kernel}: {line}"
                    );
                }
            }
        }
    }
}

#[test]
fn u32_inc_and_dec_lower_to_atom_and_red_inc_dec_u32() {
    for sm in ARCHS {
        let ptx = test_ptx("memory", sm);
        for (name, scope) in SCOPES {
            let kernel = format!("mem_probe_u32_wrapping_{name}");
            let mut expected = rmw_and_red(scope, "inc", "u32");
            expected.extend(rmw_and_red(scope, "dec", "u32"));
            assert_eq!(mnemonics(&inline_asm(kernel_body(ptx, &kernel))), expected, "sm_{sm} {kernel}");
        }
    }
}

#[test]
fn float_atomics_lower_to_add_f32_f64_and_bitwise_loads_and_stores() {
    for sm in ARCHS {
        let ptx = test_ptx("memory", sm);
        for (ty, bits) in [("f32", "b32"), ("f64", "b64")] {
            for (name, scope) in SCOPES {
                let kernel = format!("mem_probe_{ty}_{name}");
                let mut expected = loads_and_stores(scope, bits);
                expected.extend(rmw_and_red(scope, "add", ty));
                assert_eq!(mnemonics(&inline_asm(kernel_body(ptx, &kernel))), expected, "sm_{sm} {kernel}");
            }
        }
    }
}

#[test]
fn fences_spell_every_scope_and_semantics() {
    for sm in ARCHS {
        let ptx = test_ptx("memory", sm);
        let asm = inline_asm(kernel_body(ptx, "mem_probe_fences"));
        // Rust-CUDA spelled device scope `.gl` and emitted `.sys` for its block fence.
        assert_eq!(
            asm,
            [
                "fence.acq_rel.cta;",
                "fence.acq_rel.gpu;",
                "fence.acq_rel.sys;",
                "fence.sc.cta;",
                "fence.sc.gpu;",
                "fence.sc.sys;"
            ],
            "sm_{sm}"
        );
    }
}

#[test]
fn barriers_lower_to_the_non_aligned_barrier_sync_and_barrier_red() {
    for sm in ARCHS {
        let ptx = test_ptx("memory", sm);
        let body = kernel_body(ptx, "mem_probe_barriers");
        let barriers = instructions_starting(body, "bar");
        let got: Vec<&str> = barriers.iter().map(String::as_str).collect();
        assert_eq!(got.len(), 5, "sm_{sm}: {got:?}");
        assert_eq!(got[0], "barrier.sync 0;", "sm_{sm}");
        assert_eq!(got[1], "barrier.sync 1, 64;", "sm_{sm}");
        let reductions: Vec<(&str, &str)> = got[2..]
            .iter()
            .map(|l| {
                let (mnemonic, operands) = l.split_once(' ').unwrap();
                let id = operands.split(", ").nth(1).unwrap();
                (mnemonic, id)
            })
            .collect();
        assert_eq!(
            reductions,
            [("barrier.red.popc.u32", "0"), ("barrier.red.and.pred", "0"), ("barrier.red.or.pred", "0")],
            "sm_{sm}"
        );
        // Never the aligned forms, anywhere in the module.
        for bad in ["bar.sync", "bar.red", "barrier.sync.aligned", "barrier.red.aligned", ".aligned."] {
            assert!(!ptx.contains(bad), "sm_{sm}: found {bad}");
        }
    }
    // The intrinsics behind them are LLVM's non-aligned, convergent ones.
    let ir = test_llvm_ir("memory", 70);
    for intrinsic in [
        "@llvm.nvvm.barrier.cta.sync.all(",
        "@llvm.nvvm.barrier.cta.sync.count(",
        "@llvm.nvvm.barrier.cta.red.popc.all(",
        "@llvm.nvvm.barrier.cta.red.and.all(",
        "@llvm.nvvm.barrier.cta.red.or.all(",
    ] {
        let decl = ir
            .lines()
            .find(|l| l.starts_with("declare") && l.contains(intrinsic))
            .unwrap_or_else(|| panic!("no declaration of {intrinsic}"));
        let attrs = decl.rsplit('#').next().unwrap().trim();
        let group = ir.lines().find(|l| l.starts_with(&format!("attributes #{attrs} ="))).unwrap();
        assert!(group.contains("convergent"), "{intrinsic} is not convergent: {group}");
    }
    assert!(!ir.contains(".aligned"), "an aligned barrier intrinsic is used");
}

#[test]
fn volatile_accesses_lower_to_ld_volatile_and_st_volatile() {
    for sm in ARCHS {
        let ptx = test_ptx("memory", sm);
        let body = kernel_body(ptx, "mem_probe_volatile");
        let loads = instructions_starting(body, "ld.volatile");
        let stores = instructions_starting(body, "st.volatile");
        let widths = |lines: &[String]| -> Vec<String> {
            lines
                .iter()
                .map(|l| l.split_whitespace().next().unwrap().rsplit('.').next().unwrap().to_string())
                .collect()
        };
        assert_eq!(widths(&loads), ["b32", "b32", "b32", "b64", "b64", "b64"], "sm_{sm}: {loads:?}");
        assert_eq!(widths(&stores), ["b32", "b32", "b32", "b64", "b64", "b64"], "sm_{sm}: {stores:?}");
        assert!(
            !body.contains("ld.global") && !body.contains("st.global."),
            "sm_{sm}: a non-volatile access"
        );
    }
}

#[test]
fn message_passing_kernels_use_the_protocol_they_name() {
    // (kernel, must contain, must not contain)
    let kernels: [(&str, &[&str], &[&str]); 5] = [
        (
            "mem_mp_release_acquire",
            &["st.release.gpu.b32", "ld.acquire.gpu.b32", "st.relaxed.gpu.b32"],
            &["fence."],
        ),
        (
            "mem_mp_fence_volatile",
            &["fence.acq_rel.gpu;", "st.volatile.", "ld.volatile.", "ld.relaxed.gpu.b32"],
            &[".release", ".acquire", "fence.sc"],
        ),
        (
            "mem_mp_fence_sc_system",
            &["fence.sc.sys;", "st.relaxed.sys.b32", "ld.relaxed.sys.b32"],
            &[".release", ".acquire"],
        ),
        ("mem_mp_block_release_acquire", &["st.release.cta.b32", "ld.acquire.cta.b32"], &["fence.", ".gpu"]),
        (
            "mem_mp_unfenced",
            &["st.relaxed.gpu.b32", "ld.relaxed.gpu.b32"],
            &["fence.", ".release", ".acquire", "volatile"],
        ),
    ];
    for sm in ARCHS {
        let ptx = test_ptx("memory", sm);
        for (kernel, present, absent) in kernels {
            let body = kernel_body(ptx, kernel);
            for p in present {
                assert!(body.contains(p), "sm_{sm} {kernel}: no {p}");
            }
            for a in absent {
                assert!(!body.contains(a), "sm_{sm} {kernel}: has {a}");
            }
        }
    }
}

#[test]
fn block_scope_counters_use_generic_atomics_on_a_shared_array() {
    for sm in ARCHS {
        let ptx = test_ptx("memory", sm);
        for (ty, bytes) in [("u32", 72), ("i32", 56), ("u64", 112), ("i64", 112), ("f32", 8), ("f64", 16)] {
            let kernel = format!("mem_counters_{ty}_block");
            let body = kernel_body(ptx, &kernel);
            // warpsafe::shared! announces the array; the builder declares it as a `.shared`
            // global (which llc moves into the one kernel that uses it), so plain accesses
            // name it in the shared state space and the atomics' `asm!` gets its generic
            // address.
            let name = body
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .find(|word| word.starts_with("warpsafe_shared_"))
                .unwrap_or_else(|| panic!("sm_{sm} {kernel}: no warpsafe_shared_ array"));
            let decl = format!("b8 {name}[{bytes}];");
            assert!(
                ptx.lines().any(|l| l.trim_start().starts_with(".shared .align") && l.ends_with(&decl)),
                "sm_{sm} {kernel}: no {decl}"
            );
            assert!(body.contains("ld.shared."), "sm_{sm} {kernel}: no ld.shared");
            assert!(!instructions_starting(body, "cvta.shared.u64").is_empty(), "sm_{sm} {kernel}");
            assert_eq!(instructions_starting(body, "barrier.sync 0;").len(), 2, "sm_{sm} {kernel}");
            let asm = inline_asm(body);
            assert!(asm.iter().any(|l| l.starts_with("atom.") && l.contains(".cta.")), "sm_{sm} {kernel}");
            assert!(asm
                .iter()
                .filter(|l| l.starts_with("atom.") || l.starts_with("red."))
                .all(|l| l.contains(".cta.")));
        }
    }
}

#[test]
fn a_shared_array_that_nothing_writes_is_still_loaded() {
    // Shared memory starts as garbage that safe code may read; the builder declares
    // `shared!` arrays `externally_initialized` so that LLVM keeps the load (with an
    // `undef` initialiser alone the load and the comparison after it folded away).
    for sm in ARCHS {
        let body = kernel_body(test_ptx("memory", sm), "mem_read_unwritten_shared");
        assert_eq!(instructions_starting(body, "ld.shared.b32").len(), 1, "sm_{sm}: {body}");
        assert_eq!(instructions_starting(body, "setp.eq.b32").len(), 1, "sm_{sm}: {body}");
    }
}

#[test]
fn no_invalid_or_legacy_spellings_anywhere() {
    for sm in ARCHS {
        let ptx = test_ptx("memory", sm);
        for bad in [
            "membar",
            ".gl;",
            ".gl.",
            "atom.or.u32",
            ".or.u32",
            ".and.u32",
            ".xor.u32",
            ".add.s64",
            ".inc.u64",
            ".dec.u64",
        ] {
            assert!(!ptx.contains(bad), "sm_{sm}: found {bad}");
        }
    }
}

#[test]
fn memory_kernels_assemble_for_sm70_sm80_sm90_without_spills() {
    for sm in ARCHS {
        let ptx = test_ptx("memory", sm);
        assert!(ptx.contains(&format!(".target sm_{sm}")), "sm_{sm}: wrong .target");
        let report = assemble(ptx, sm)
            .unwrap_or_else(|e| panic!("ptxas rejected the memory kernels for sm_{sm}:\n{e}"));
        let spills: Vec<&str> = report.lines().filter(|l| l.contains("spill")).collect();
        assert!(!spills.is_empty(), "ptxas -v printed no spill report:\n{report}");
        for line in spills {
            assert!(line.contains("0 bytes spill stores, 0 bytes spill loads"), "sm_{sm} spills: {line}");
        }
    }
}

#[test]
fn ptxas_rejects_a_misspelled_scope() {
    // The assembly check above is only worth something if ptxas says no to the bug
    // Rust-CUDA shipped.
    let ptx = test_ptx("memory", 70);
    let broken = ptx.replacen("fence.sc.gpu;", "fence.sc.gl;", 1);
    assert_ne!(broken, ptx);
    assert!(assemble(&broken, 70).is_err(), "ptxas accepted fence.sc.gl");
}
