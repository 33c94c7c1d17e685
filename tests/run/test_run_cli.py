"""``torchlint run SCRIPT -- ARGS`` end to end: the report in each format, the summary on
standard error, confirmed static findings, the script's arguments, and bad input."""

from __future__ import annotations

import json
import textwrap

import pytest

from torchlint.cli import main

pytest.importorskip("torch")

TRAIN = textwrap.dedent("""\
    import argparse
    import torch
    import torch.nn as nn
    from torch.utils.data import DataLoader, TensorDataset

    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, required=True)
    parser.add_argument("--out", default="model.pt")
    args = parser.parse_args()
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    loader = DataLoader(TensorDataset(torch.randn(64, 8), torch.randn(64, 1)), batch_size=8, shuffle=True)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1)).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(args.epochs):
        total = 0
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            opt.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            total += loss
        print(epoch, float(total))
    torch.save(model.state_dict(), args.out)
    """)


def test_run_reports_confirmed_and_new_findings_as_json(project, capsys):
    project.write("train.py", TRAIN)
    code = main(["run", "--isolated", "--format", "json", "train.py", "--", "--epochs", "2"])
    out, err = capsys.readouterr()
    found = {(f["rule"], f["line"]): f for f in json.loads(out)}
    assert code == 1
    assert found[("TL002", 23)]["confirmed"] is True  # `total += loss`, static and seen
    assert "run: train.py ran 6 optimizer step(s)" in err and "stopped at the step bound" not in err
    assert "the script finished" in err
    assert "1 file(s) the script wrote went to a temporary directory" in err
    assert not (project.root / "model.pt").exists()


def test_the_scripts_own_arguments_reach_it(project, capsys):
    project.write("train.py", TRAIN)
    main(["run", "--isolated", "train.py"])  # --epochs is required: argparse exits 2
    _, err = capsys.readouterr()
    assert "the script called exit(2)" in err or "exited with 2" in err


def test_run_findings_in_sarif(project, capsys):
    project.write("train.py", TRAIN.replace("        opt.zero_grad()\n", ""))
    main(["run", "--isolated", "--format", "sarif", "train.py", "--", "--epochs", "2"])
    sarif = json.loads(capsys.readouterr().out)
    results = sarif["runs"][0]["results"]
    rules = {r["ruleId"]: r for r in results}
    assert rules["TL001"]["properties"]["confirmedByTrace"] is True


def test_a_script_that_does_not_parse_is_reported_not_run_into_a_traceback(project, capsys):
    project.write("train.py", "import torch\ndef f(:\n")
    assert main(["run", "--isolated", "train.py"]) == 1
    out, err = capsys.readouterr()
    assert "TL000" in out and "Traceback" not in out + err
    assert "the script failed at train.py:2: SyntaxError" in err


def test_missing_script_is_a_usage_error(project, capsys):
    assert main(["run", "missing.py"]) == 2
    assert "run: missing.py: no such file" in capsys.readouterr().err


def test_check_run_lints_every_path_and_runs_one(project, capsys):
    project.write("train.py", TRAIN)
    project.write("other.py", "import torch\nx = torch.load('a.pt', weights_only=False)\n")
    main(["check", "--isolated", "--format", "concise", "--run", "train.py", "--run-args", "--epochs 1", "."])
    out, err = capsys.readouterr()
    assert "other.py" in out and "train.py" in out
    assert "ran 3 optimizer step(s)" in err


def test_run_sets_the_peak_against_a_gpu(project, capsys):
    project.write("train.py", TRAIN)
    main(["run", "--isolated", "-q", "--run-gpu", "t4", "train.py", "--", "--epochs", "1"])
    err = capsys.readouterr().err
    assert "run: peak memory on the fake GPU" in err
    assert ": fits on NVIDIA T4 (16 GiB)" in err


def test_an_unknown_gpu_is_a_usage_error(project, capsys):
    project.write("train.py", TRAIN)
    assert main(["run", "--run-gpu", "v1000", "train.py"]) == 2
    assert "--run-gpu v1000: unknown GPU" in capsys.readouterr().err


def test_run_says_the_learning_rate_of_each_step(project, capsys):
    project.write("train.py", TRAIN.replace(
        "opt = torch.optim.Adam(model.parameters(), lr=1e-3)\n",
        "opt = torch.optim.Adam(model.parameters(), lr=1e-3)\n"
        "sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.1)\n").replace(
        "        opt.step()\n", "        opt.step()\n        sched.step()\n"))
    main(["run", "--isolated", "-q", "train.py", "--", "--epochs", "1"])
    err = capsys.readouterr().err
    assert "run: learning rate at each optimizer step: 0.001, 0.001, 0.0001" in err


def test_a_removed_api_is_confirmed_where_it_raises(project, capsys):
    project.write("train.py", TRAIN.replace("print(epoch, float(total))", "print(epoch, loss.data[0])"))
    main(["run", "--isolated", "--format", "json", "train.py", "--", "--epochs", "1"])
    found = {(f["rule"], f["line"]): f for f in json.loads(capsys.readouterr().out)}
    assert found[("TL018", 24)]["confirmed"] is True


GAN = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    from torch.utils.data import DataLoader, TensorDataset

    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    G = nn.Sequential(nn.Linear(4, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 2)).to(device)
    D = nn.Sequential(nn.Linear(2, 16), nn.BatchNorm1d(16), nn.LeakyReLU(0.2), nn.Linear(16, 1)).to(device)
    opt_g = torch.optim.Adam(G.parameters(), lr=2e-4)
    opt_d = torch.optim.Adam(D.parameters(), lr=2e-4)
    bce = nn.BCEWithLogitsLoss()
    loader = DataLoader(TensorDataset(torch.randn(128, 2)), batch_size=16, shuffle=True, drop_last=True)
    for epoch in range(3):
        for (real,) in loader:
            real = real.to(device)
            ones = torch.ones(real.size(0), 1, device=device)
            zeros = torch.zeros(real.size(0), 1, device=device)
            fake = G(torch.randn(real.size(0), 4, device=device))
            opt_d.zero_grad()
            loss_d = bce(D(real), ones) + bce(D(fake.detach()), zeros)
            loss_d.backward()
            opt_d.step()
            opt_g.zero_grad()
            loss_g = bce(D(fake), ones)
            loss_g.backward()
            opt_g.step()
        with torch.no_grad():
            G.eval()
            samples = G(torch.randn(64, 4, device=device))
            G.train()
    """)


def test_a_discriminator_called_twice_before_its_backward_is_training(project, capsys):
    project.write("gan.py", GAN)
    main(["run", "--isolated", "--format", "json", "--select", "TL003,TL011", "gan.py"])
    out, err = capsys.readouterr()
    assert json.loads(out) == [] and "ran 12 optimizer step(s)" in err


def test_sampling_in_training_mode_after_the_epoch_is_evaluation(project, capsys):
    project.write("gan.py", GAN.replace("        G.eval()\n", "").replace("        G.train()\n", ""))
    main(["run", "--isolated", "--format", "json", "--select", "TL003,TL011", "gan.py"])
    found = [(f["rule"], f["line"]) for f in json.loads(capsys.readouterr().out)]
    assert found == [("TL011", 28)]
