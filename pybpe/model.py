"""Which encoding an OpenAI model uses: encoding_for_model("gpt-4o").

The tables are tiktoken's (tiktoken/model.py, release 0.14): exact model
names first, then name prefixes, so that dated or fine-tuned variants
("gpt-4o-2024-05-13", "ft:gpt-4o:my-org::abc") need no new entry.  A name
matching neither raises KeyError, as in tiktoken.

    >>> encoding_name_for_model("gpt-4o-mini")
    'o200k_base'
    >>> encoding_for_model("gpt-3.5-turbo").name
    'cl100k_base'
"""

# Exact model names.
MODEL_TO_ENCODING = {
    # reasoning and chat models
    "o1": "o200k_base", "o3": "o200k_base", "o4-mini": "o200k_base",
    "gpt-5": "o200k_base", "gpt-4.1": "o200k_base", "gpt-4o": "o200k_base",
    "gpt-4": "cl100k_base", "gpt-3.5-turbo": "cl100k_base", "gpt-3.5": "cl100k_base",
    "gpt-35-turbo": "cl100k_base",  # the spelling of Azure deployments
    # base and embedding models
    "davinci-002": "cl100k_base", "babbage-002": "cl100k_base",
    "text-embedding-ada-002": "cl100k_base", "text-embedding-3-small": "cl100k_base",
    "text-embedding-3-large": "cl100k_base",
    # retired completion, code and edit models
    "text-davinci-003": "p50k_base", "text-davinci-002": "p50k_base",
    "text-davinci-001": "r50k_base", "text-curie-001": "r50k_base", "text-babbage-001": "r50k_base",
    "text-ada-001": "r50k_base", "davinci": "r50k_base", "curie": "r50k_base", "babbage": "r50k_base",
    "ada": "r50k_base",
    "code-davinci-002": "p50k_base", "code-davinci-001": "p50k_base", "code-cushman-002": "p50k_base",
    "code-cushman-001": "p50k_base", "davinci-codex": "p50k_base", "cushman-codex": "p50k_base",
    "text-davinci-edit-001": "p50k_edit", "code-davinci-edit-001": "p50k_edit",
    # retired embedding models
    "text-similarity-davinci-001": "r50k_base", "text-similarity-curie-001": "r50k_base",
    "text-similarity-babbage-001": "r50k_base", "text-similarity-ada-001": "r50k_base",
    "text-search-davinci-doc-001": "r50k_base", "text-search-curie-doc-001": "r50k_base",
    "text-search-babbage-doc-001": "r50k_base", "text-search-ada-doc-001": "r50k_base",
    "code-search-babbage-code-001": "r50k_base", "code-search-ada-code-001": "r50k_base",
    # open weights
    "gpt2": "gpt2", "gpt-2": "gpt2",
}

# Name prefixes, tried in this order when the exact name is unknown (the
# order matters where one prefix starts another: "ft:gpt-4o" before
# "ft:gpt-4").
MODEL_PREFIX_TO_ENCODING = {
    "o1-": "o200k_base", "o3-": "o200k_base", "o4-mini-": "o200k_base",
    "gpt-5": "o200k_base", "gpt-4.5-": "o200k_base", "gpt-4.1-": "o200k_base",
    "chatgpt-4o-": "o200k_base", "gpt-4o-": "o200k_base",
    "gpt-4-": "cl100k_base", "gpt-3.5-turbo-": "cl100k_base", "gpt-35-turbo-": "cl100k_base",
    "gpt-oss-": "o200k_harmony",
    # fine-tuned models: "ft:<base model>:<organisation>::<id>"
    "ft:gpt-4o": "o200k_base", "ft:gpt-4": "cl100k_base", "ft:gpt-3.5-turbo": "cl100k_base",
    "ft:davinci-002": "cl100k_base", "ft:babbage-002": "cl100k_base",
}


def encoding_name_for_model(model_name):
    """The name of the encoding `model_name` uses; KeyError if unknown.

        >>> encoding_name_for_model("gpt-oss-120b")
        'o200k_harmony'
        >>> encoding_name_for_model("bert")
        Traceback (most recent call last):
        ...
        KeyError: "Could not automatically map 'bert' to an encoding; name one with pybpe.get_encoding"
    """
    name = MODEL_TO_ENCODING.get(model_name)
    if name is not None:
        return name
    for prefix, name in MODEL_PREFIX_TO_ENCODING.items():
        if model_name.startswith(prefix):
            return name
    raise KeyError("Could not automatically map %r to an encoding; name one with pybpe.get_encoding"
                   % (model_name,))


def encoding_for_model(model_name, *, backend=None):
    """The Encoding `model_name` uses (see encoding_name_for_model);
    `backend` as in get_encoding."""
    from .registry import get_encoding  # late: the tables here need no registry or file readers

    return get_encoding(encoding_name_for_model(model_name), backend=backend)
