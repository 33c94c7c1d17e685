"""Hugging Face models for the memory plan's tests, built from a config (no weights are
downloaded); the tests that use them skip where transformers is not installed."""


def gpt2(attn="eager", layers=2, dim=64, vocab=1000, positions=256):
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(n_layer=layers, n_embd=dim, n_head=4, n_positions=positions, vocab_size=vocab,
                        bos_token_id=0, eos_token_id=0, attn_implementation=attn)
    return GPT2LMHeadModel(config)
