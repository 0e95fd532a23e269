import copy

import torch

from drills.kit.checkpoint import restore, take_checkpoint


def make(seed: int = 0) -> tuple[torch.nn.Module, torch.optim.Optimizer, torch.Tensor]:
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.05)  # has state: two moments a weight
    inputs = torch.randn(16, 4, generator=torch.Generator().manual_seed(seed))
    return model, optimizer, inputs


def step(model: torch.nn.Module, optimizer: torch.optim.Optimizer, inputs: torch.Tensor) -> float:
    loss: torch.Tensor = model(inputs).pow(2).mean()
    optimizer.zero_grad(set_to_none=True)
    loss.backward()  # type: ignore[no-untyped-call]
    optimizer.step()
    return loss.item()


def parameters(model: torch.nn.Module) -> list[torch.Tensor]:
    return [p.detach().clone() for p in model.parameters()]


def test_a_checkpoint_does_not_move_with_training() -> None:
    model, optimizer, inputs = make()
    step(model, optimizer, inputs)
    checkpoint = take_checkpoint(model, optimizer, step=1)
    frozen = copy.deepcopy(checkpoint)
    for _ in range(3):
        step(model, optimizer, inputs)
    for name, tensor in frozen.model_state.items():
        assert torch.equal(checkpoint.model_state[name], tensor)
    moments = checkpoint.optimizer_state["state"][0]["exp_avg"]
    assert torch.equal(moments, frozen.optimizer_state["state"][0]["exp_avg"])


def test_restoring_replays_the_same_steps_bit_for_bit() -> None:
    model, optimizer, inputs = make()
    step(model, optimizer, inputs)
    checkpoint = take_checkpoint(model, optimizer, step=1)
    straight = [step(model, optimizer, inputs) for _ in range(3)]
    after_straight = parameters(model)
    # Twice from the same checkpoint: the first replay must not have changed it.
    for _ in range(2):
        restore(model, optimizer, checkpoint)
        assert [step(model, optimizer, inputs) for _ in range(3)] == straight
        for got, expected in zip(parameters(model), after_straight, strict=True):
            assert torch.equal(got, expected)


def test_why_restore_copies_the_optimizer_state() -> None:
    # torch's Optimizer.load_state_dict keeps the tensors it is given and updates them in place:
    # loading a checkpoint's state without a copy lets the next step rewrite the checkpoint.
    model, optimizer, inputs = make()
    step(model, optimizer, inputs)
    checkpoint = take_checkpoint(model, optimizer, step=1)
    saved = checkpoint.optimizer_state["state"][0]["exp_avg"].clone()
    optimizer.load_state_dict(checkpoint.optimizer_state)
    step(model, optimizer, inputs)
    assert not torch.equal(checkpoint.optimizer_state["state"][0]["exp_avg"], saved)
