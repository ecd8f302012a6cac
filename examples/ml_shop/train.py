"""The shop's churn model, trained the way an ML team trains it: scikit-learn on the feature table
the Spark pipeline writes (examples/spark_shop: ml/user_features, from raw users and orders),
logged to MLflow with ``mlflow.log_input`` and registered as ``churn``. No lineage code: MLflow
records the run, its dataset and the model; ``lineage mlflow sync`` turns them into lineage.

    python examples/ml_shop/train.py --tracking-uri http://127.0.0.1:5055 \\
        --features /tmp/shop/ml/user_features [--without-email]

Version 1 uses the raw e-mail's domain as a feature (the privacy problem to find); a version
trained with ``--without-email`` drops it.
"""

from __future__ import annotations

import argparse

import mlflow
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.feature_extraction.text import HashingVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

NUMERIC = ["order_count", "lifetime_value"]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tracking-uri", required=True)
    p.add_argument("--features", required=True, help="the folder of ml/user_features (Parquet)")
    p.add_argument("--without-email", action="store_true", help="train without the e-mail column")
    p.add_argument("--experiment", default="churn")
    p.add_argument("--model-name", default="churn")
    a = p.parse_args()

    frame = pd.read_parquet(a.features)
    frame[NUMERIC] = frame[NUMERIC].fillna(0)
    # the label: a customer below the median lifetime value is taken to have churned (a demo's rule)
    label = (frame["lifetime_value"] < frame["lifetime_value"].median()).astype(int)
    columns = ["country", *NUMERIC] + ([] if a.without_email else ["email"])
    parts: list[tuple[str, object, str | list[str]]] = [
        ("country", OneHotEncoder(handle_unknown="ignore"), ["country"]),
        ("numbers", StandardScaler(), NUMERIC)]
    if not a.without_email:
        parts.append(("email", HashingVectorizer(n_features=64, analyzer="char", ngram_range=(3, 3)),
                      "email"))
    model = Pipeline([("features", ColumnTransformer(parts)),
                      ("classify", LogisticRegression(max_iter=500))])
    features = frame[columns]

    mlflow.set_tracking_uri(a.tracking_uri)
    mlflow.set_experiment(a.experiment)
    with mlflow.start_run(run_name="train-churn" + ("-without-email" if a.without_email else "")):
        mlflow.log_input(mlflow.data.from_pandas(frame, source=a.features, name="user_features"),
                         context="training")
        model.fit(features, label)
        mlflow.log_params({"features": ",".join(columns), "max_iter": 500})
        mlflow.log_metric("train_accuracy", float(model.score(features, label)))
        signature = mlflow.models.infer_signature(features, model.predict(features))
        info = mlflow.sklearn.log_model(model, name="model", signature=signature,
                                        registered_model_name=a.model_name)
        print(f"trained {a.model_name} version {info.registered_model_version} "
              f"(run {mlflow.active_run().info.run_id}) on {', '.join(columns)}")


if __name__ == "__main__":
    main()
